/** Types of parse-worker.js (the parser pool's thread; importing it elsewhere only gives its options). */

/** mailparser options: nothing that is superlinear on hostile input. */
export declare const PARSER_OPTIONS: Record<string, unknown>;

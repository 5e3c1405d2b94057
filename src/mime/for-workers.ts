/**
 * @module mime/for-workers
 * The front door of src/mime/ for worker threads: the pure functions a thread needs (the fast-path parser, the
 * normalisation, the hash), without the parser pool and what it loads. A thread loads its module graph at start,
 * under tsx on every start, so what it imports is kept to what it runs (src/mail/ingest-prepare.ts: 0.2 s instead of
 * 1.4 s through ./index.ts, which held the first messages of a new writer thread back).
 */
export { normalize, sha256 } from './normalize.js';
export { parseSimpleMessage } from './simple-mime.js';

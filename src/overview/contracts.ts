/**
 * @module overview/contracts
 * The overview's declared interface (issue 39): the dashboard's first page in one read.
 */
import type { Principal } from '../access.js';
import type { GetOverviewInput, Overview } from '../schemas/overview.js';

/** Counts of what a principal reaches, today's in a time zone of its choosing. */
export interface OverviewService {
  /** The overview as `principal` may see it: figures outside its permissions or scope are null. */
  read(principal: Principal, input: GetOverviewInput): Promise<Overview>;
}

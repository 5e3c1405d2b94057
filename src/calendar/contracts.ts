/**
 * @module calendar/contracts
 * The calendar area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type { FreeBusyList, GetFreeBusyInput } from '../schemas/free-busy.js';
import type { Availability, GetAvailabilityInput } from '../schemas/availability.js';

/** What createAvailabilityService() returns (src/calendar/availability-service.ts). */
export interface AvailabilityService {
  /**
   * Busy blocks of each address in the window. Addresses that are not grants of the caller's application
   * get an inline error entry, as Nylas answers for addresses it cannot read.
   */
  freeBusy(principal: Principal, input: GetFreeBusyInput): Promise<FreeBusyList>;
  /** Bookable slots for the participants (all grants of the caller's application), per availability.ts. */
  find(principal: Principal, input: GetAvailabilityInput): Promise<Availability>;
}

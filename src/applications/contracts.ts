/**
 * @module applications/contracts
 * The applications area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type {
  ApplicationDetails,
  CreateRedirectUriInput,
  RedirectUri,
  UpdateRedirectUriInput,
} from '../schemas/applications.js';

/** What createApplicationDetailsService() returns (src/applications/application-details.ts). */
export interface ApplicationDetailsService {
  /** The calling application's details, with its redirect URIs as `callback_uris`. */
  details(principal: Principal): Promise<ApplicationDetails>;
  listRedirectUris: (principal: Principal) => Promise<RedirectUri[]>;
  findRedirectUri(principal: Principal, id: string): Promise<RedirectUri>;
  createRedirectUri(principal: Principal, input: CreateRedirectUriInput): Promise<RedirectUri>;
  updateRedirectUri(principal: Principal, input: UpdateRedirectUriInput): Promise<RedirectUri>;
  destroyRedirectUri(principal: Principal, id: string): Promise<void>;
}

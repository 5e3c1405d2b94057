/**
 * @module grants
 * The front door of src/grants/: what other areas, the operations and the faces use of it.
 */
export type { ConnectInput, FolderCounter, FolderService, GrantService } from './contracts.js';
export { createFolderService, ensureFoldersByName } from './folder-service.js';
export { toFolder } from './folder-mapper.js';
export { accountsOf, grantOf, toGrant } from './grant-mapper.js';
export { createGrantService } from './grant-service.js';
export { chooseWorkspace } from './placement.js';
export { additionalFolderNames, addMissingFolders } from './policy-folders.js';
export { pauseSending, RESUME_HINT } from './sending-state.js';

/** Hono environment of the `/v3` app: what middleware puts on the context. */
import type { Core, Logger, Principal } from '../src/index.js';

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    core: Core;
    logger: Logger;
    /** The route pattern for logs and metrics, set by a sub-app with a router of its own (the dashboard). */
    route: string | undefined;
  };
}

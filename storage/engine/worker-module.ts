/**
 * @module storage/engine/worker-module
 * The one rule for the modules of worker threads (the MIME parser pool, the mail writer and its prepare module, the
 * checkpoint thread, the iCalendar parser): a thread runs the compiled JavaScript next to the module that starts it
 * (`dist/…/x.js` in the build). When that file is not there, the code runs from its TypeScript sources (vitest, or
 * tsx in a checkout): a worker thread inherits no TypeScript loader, so the thread registers tsx (a dev dependency)
 * first and then loads `x.ts`. Every starter goes through {@link workerModule} and {@link startWorker}.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The module `name` (no extension) next to `base` (the starter's `import.meta.url`): `name.js` when it exists (the
 * build), else `name.ts` (the sources). Looked up once, when the starter's module loads.
 */
export function workerModule(base: string | URL, name: string): URL {
  const compiled = new URL(`./${name}.js`, base);
  if (existsSync(fileURLToPath(compiled))) return compiled;
  const source = new URL(`./${name}.ts`, base);
  if (existsSync(fileURLToPath(source))) return source;
  throw new Error(`worker module ${name} not found next to ${fileURLToPath(base)} (neither ${name}.js nor ${name}.ts)`);
}

/** Whether a module URL names TypeScript sources (then its thread needs tsx, see {@link startWorker}). */
export function isTypeScriptModule(module: URL): boolean {
  return /\.[cm]?ts$/.test(module.pathname);
}

let tsxApi: string | undefined;

/**
 * File URL of tsx's loader API (its ES module entry), resolved from this package: running from the sources means a
 * checkout with its dev dependencies.
 */
function tsxApiUrl(): string {
  try {
    return (tsxApi ??= import.meta.resolve('tsx/esm/api'));
  } catch (error) {
    throw new Error(
      'running Agentpost from its TypeScript sources needs tsx (a dev dependency): run `npm install`, or `npm run build` and use dist/',
      { cause: error },
    );
  }
}

/**
 * Starts a worker thread on `module` (from {@link workerModule}). Compiled JavaScript starts as it is; a TypeScript
 * module starts from a two-line bootstrap that registers tsx in the thread, then imports it. Either way a module
 * that fails to load ends the thread with an `error` event, and `workerData`, `resourceLimits` and the rest of
 * `options` apply unchanged.
 */
export function startWorker(module: URL, options: WorkerOptions = {}): Worker {
  if (!isTypeScriptModule(module)) return new Worker(module, options);
  // Script (not module) code, so it runs alike on every Node version: dynamic imports of absolute URLs only.
  const bootstrap = [
    `import(${JSON.stringify(tsxApiUrl())}).then((api) => (api.register ?? api.default.register)())`,
    `.then(() => import(${JSON.stringify(module.href)}));`,
  ].join('');
  return new Worker(bootstrap, { ...options, eval: true });
}

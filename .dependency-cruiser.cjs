/**
 * The layering of STYLE.md, checked on every `npm test` (test/layering.test.ts) and by `npm run lint:layers`:
 *
 *   storage ← src ← { tools, server }      (server may use tools; tools never use server)
 *
 * `src` is the core and carries no transport: no hono, @hono/*, @modelcontextprotocol/sdk or ai. ical.js stays
 * inside the src/calendar/ical* modules, the one place that parses and writes iCalendar.
 * Inside src, imports point one way too: no module imports itself back through others (type-only imports count),
 * areas (the folders of src) never import the operations registry, and neither the schemas (the contracts) nor the
 * ports (interfaces to the outside world) import an area or the core's wiring (src/core.ts, src/index.ts).
 * Every other folder of src is an area with a front door: other areas, the operations, the top-level modules of src
 * and the faces use it only through its index.ts (what it offers) or contracts.ts (its declared types).
 * `examples`, `test`, `bench` and `bin` may import anything, so they are not cruised.
 * Raw SQL (`sql` from drizzle-orm) only in the store modules of an area (*-store.ts) is checked by
 * test/layering.test.ts instead: dependency-cruiser sees which modules a module imports, not which names.
 */

/** Transport libraries, matched both resolved (node_modules/…) and unresolved (the bare name). */
const TRANSPORTS =
  '(^|/)node_modules/(hono|@hono/[^/]+|@modelcontextprotocol/sdk|ai)/|^(hono|@hono/[^/]+|@modelcontextprotocol/sdk|ai)(/|$)';

/** An area of src (any of its folders), or the modules that wire and export them all. */
const AREA_OR_WIRING = '^src/([^/]+/|core\\.ts$|index\\.ts$)';

/** The folders of src that are not areas: the schemas, the registry, the ports and their implementations. */
const NOT_AREAS = '(schemas|operations|ports|system)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'storage-imports-no-layer-above',
      comment: 'storage is the bottom layer: it never imports src, tools or server.',
      severity: 'error',
      from: { path: '^storage/' },
      to: { path: '^(src|tools|server)/' },
    },
    {
      name: 'src-imports-no-face',
      comment: 'src is the core: tools and server build on it, never the other way round.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(tools|server)/' },
    },
    {
      name: 'src-imports-no-transport',
      comment: 'src never imports hono, @hono/*, @modelcontextprotocol/sdk or ai; those belong to server/ and tools/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: TRANSPORTS },
    },
    {
      name: 'tools-import-no-server',
      comment: 'tools/ builds the MCP server and AI SDK tools from src/operations; what both faces share lives in src.',
      severity: 'error',
      from: { path: '^tools/' },
      to: { path: '^server/' },
    },
    {
      name: 'no-circular',
      comment:
        'No module imports itself back through others; a type-only import ties two modules as much as any other.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'areas-never-import-operations',
      comment:
        'The operations registry builds on the areas; what both need (Principal, OperationContext) is in src/access.ts.',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: '^src/operations/' },
      to: { path: '^src/operations/' },
    },
    {
      name: 'schemas-never-import-areas',
      comment:
        'The schemas are the contracts every area and face reads; what they need lives in src/schemas or a leaf module of src.',
      severity: 'error',
      from: { path: '^src/schemas/' },
      to: { path: AREA_OR_WIRING, pathNot: '^src/schemas/' },
    },
    {
      name: 'ports-import-no-area',
      comment: 'The ports are interfaces to the outside world; areas implement or use them, never the other way round.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: AREA_OR_WIRING, pathNot: '^src/ports/' },
    },
    {
      name: 'areas-only-through-front-doors',
      comment:
        "An area (a folder of src other than schemas, operations, ports and system) is used from outside only through its index.ts or contracts.ts (or, from a worker thread's module, its lean for-workers.ts); inside, its modules use each other freely.",
      severity: 'error',
      from: { path: '^(src/([^/]+)/|src/[^/]+\\.ts$|tools/|server/)', pathNot: '^src/(schemas|ports)/' },
      to: {
        path: '^src/[^/]+/',
        pathNot: ['^src/$2/', `^src/${NOT_AREAS}/`, '^src/[^/]+/(index|contracts|for-workers)\\.ts$'],
      },
    },
    {
      name: 'worker-doors-stay-lean',
      comment:
        "An area's for-workers.ts is what a worker thread loads at start: it never re-exports through an index.ts (which loads the area's services).",
      severity: 'error',
      from: { path: '^src/[^/]+/for-workers\\.ts$' },
      to: { path: '^src/[^/]+/index\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'ical-js-only-in-ical-modules',
      comment: 'ical.js is imported only by the src/calendar/ical* modules.',
      severity: 'error',
      from: { path: '^(src|storage|tools|server)/', pathNot: '^src/calendar/ical[^/]*$' },
      to: { path: '(^|/)node_modules/ical\\.js/|^ical\\.js$' },
    },
  ],
  options: {
    // Type-only imports count: a type from hono in src still ties the core to the transport.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|storage/migrations)/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};

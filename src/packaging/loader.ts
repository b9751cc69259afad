import { compileBundle, runBundle } from './compiled-bundle.js';

/**
 * dist/bundle/main.js, the command's entry point: runs the bundle with V8's code cache (see compiled-bundle.ts).
 * Bundled as CommonJS by build-bundle.js, so `__dirname` is the bundle's folder.
 */
runBundle(compileBundle(__dirname));

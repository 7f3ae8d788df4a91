import module, { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/** What matrix-bot-sdk 0.7 requires for its crypto: a native addon. */
const NATIVE = "@matrix-org/matrix-sdk-crypto-nodejs";
/** The same library built to WebAssembly, a dependency of roomgate itself. */
const WASM = "@matrix-org/matrix-sdk-crypto-wasm";

// matrix-bot-sdk requires the native crypto package, whose binary a postinstall script
// downloads from outside the npm registry (a script npm may not run, on a machine that
// may not reach it), so that package loads nowhere reliably. roomgate's crypto is the
// WebAssembly build of the same library: the native name resolves to it in every
// install, a checkout or a package installed as a dependency alike (an `overrides`
// entry would apply to a checkout only). Modules that load matrix-bot-sdk import this
// one first.
const wasmPath = createRequire(import.meta.url).resolve(WASM);
const hooks = module as unknown as {
  registerHooks?: (hooks: {
    resolve: (specifier: string, context: object, next: (s: string, c?: object) => unknown) => unknown;
  }) => void;
  _resolveFilename: (request: string, ...rest: unknown[]) => string;
};
if (typeof hooks.registerHooks === "function") {
  hooks.registerHooks({
    resolve: (specifier, context, next) =>
      specifier === NATIVE
        ? { url: pathToFileURL(wasmPath).href, shortCircuit: true }
        : next(specifier, context),
  });
} else {
  // Node 22 before 22.15 has no module.registerHooks: the CommonJS resolver is where require() asks.
  const resolveFilename = hooks._resolveFilename;
  hooks._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    return resolveFilename.call(this, request === NATIVE ? wasmPath : request, ...rest);
  };
}

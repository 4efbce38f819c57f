// Preloaded (`node -r`) to run a bench as if `@opentelemetry/api` were not installed: its
// resolution fails, as it does where nothing depends on it.
const Module = require("node:module")
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === "@opentelemetry/api")
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" })
  return resolve.call(this, request, ...rest)
}

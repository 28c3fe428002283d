/**
 * What code outside the providers layer (the CLI's `landscape`) uses of a backend's own files, named in one
 * public place so no caller imports a backend's internals. Choosing and making backends goes through the
 * registry (registry.ts). Importing this module loads the kind backend: only commands that use kind do.
 */
export { loadImageIntoKindCluster } from "./kind/image-load.ts";
export { kindNameOf } from "./kind/names.ts";

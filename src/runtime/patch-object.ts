/** Moved to api-server/patch-object.ts; kept for the importers in kinds/cluster and machine-controller.ts until they import from there. */
export * from "./api-server/patch-object.ts";

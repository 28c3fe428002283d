/** Moved to controllers/keyed-controller.ts; kept for the importers in kinds/cluster and machine-controller.ts until they import from there. */
export * from "./controllers/keyed-controller.ts";

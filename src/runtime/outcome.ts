/** Moved to controllers/outcome.ts; kept for the importers in kinds/cluster and machine-controller.ts until they import from there. */
export * from "./controllers/outcome.ts";

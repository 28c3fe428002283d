/** Moved to controllers/recent-writes.ts; kept for the importers in kinds/cluster and machine-controller.ts until they import from there. */
export * from "./controllers/recent-writes.ts";

/**
 * Set-up file of every heavy test file: takes the machine-wide locks its file holds (machine-locks.ts) for the
 * file's whole run, once its heavy assets are there (heavy-assets-ready.ts runs first), waiting while another file
 * holds one.
 */
import { afterAll, expect } from "vitest";
import { holdFileLocks } from "./machine-locks.ts";

/** As long as the heavy assets may take: the other holder may itself be waiting for them. */
const PATIENCE_MS = 100 * 60_000;

const testPath = expect.getState().testPath;
if (testPath) afterAll(await holdFileLocks(testPath, PATIENCE_MS));

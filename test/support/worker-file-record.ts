/**
 * Set-up file of the integration and heavy projects: where `bench/suite-cpu.ts --by-file` asks for it (it sets
 * OPENMCP_TEST_WORKER_FILES), notes which test file this worker process runs, so that the CPU of the processes the
 * file starts (control planes, engines, CLIs) is counted to that file. Does nothing otherwise.
 */
import { appendFileSync } from "node:fs";
import { expect } from "vitest";

const record = process.env.OPENMCP_TEST_WORKER_FILES;
const testPath = expect.getState().testPath;
if (record && testPath) appendFileSync(record, `${process.pid}\t${testPath}\n`);

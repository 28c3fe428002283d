/** The one error policy: what the queue does with each kind of failed reconcile, and how it is logged. */
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { LogFields, Logger, LogLevel } from "../../../../src/api/logger.ts";
import { controllerQueue } from "../../../../src/runtime/controllers/controller-queue.ts";
import { classifyFailure } from "../../../../src/runtime/controllers/error-policy.ts";
import { ConflictError, TerminalError, WriteLoopError } from "../../../../src/runtime/controllers/errors.ts";
import { FakeClock, settle } from "../../../support/fake-clock.ts";

const status = (code: number, reason: string, message: string) =>
  new ApiException(code, reason, { kind: "Status", code, reason, message }, {});
const tooMany = status(429, "TooManyRequests", "the server has received too many requests");
const invalid = status(
  422,
  "Invalid",
  'Cluster.clusters.openmcp.cloud "x" is invalid: spec.tenancy: Unsupported value',
);
const wrapped = (cause: unknown) => new Error("reconcile of default/x", { cause });

describe("classifyFailure", () => {
  it("gives up on a TerminalError, also as the cause of another error", () => {
    const terminal = new TerminalError("refused as invalid", { cause: invalid });
    expect(classifyFailure(terminal)).toEqual({ kind: "terminal" });
    expect(classifyFailure(wrapped(terminal))).toEqual({ kind: "terminal" });
  });

  it("waits as asked, without failing, for a 429 and for a write held back after a loop", () => {
    expect(classifyFailure(tooMany)).toEqual({ kind: "requeueAfter", ms: 1_000, reason: "throttled" });
    expect(classifyFailure(wrapped(new WriteLoopError("held back", 2_500)))).toEqual({
      kind: "requeueAfter",
      ms: 2_500,
      reason: "heldBack",
    });
  });

  it("retries a conflict as expected, and everything else (a raw 422 included) as a failure", () => {
    expect(classifyFailure(new ConflictError("changed", { cause: status(409, "Conflict", "") }))).toEqual({
      kind: "retry",
      expected: true,
    });
    expect(classifyFailure(wrapped(status(409, "AlreadyExists", "exists")))).toEqual({
      kind: "retry",
      expected: true,
    });
    for (const error of [new Error("backend down"), status(500, "InternalError", "etcd"), invalid, "text"]) {
      expect(classifyFailure(error)).toEqual({ kind: "retry", expected: false });
    }
  });

  it("lets a terminal error win over what its causes would say", () => {
    expect(classifyFailure(new TerminalError("no", { cause: tooMany }))).toEqual({ kind: "terminal" });
  });
});

/** A logger that keeps what it is told. */
function recordingLogger(): Logger & {
  readonly lines: Array<{ level: LogLevel; msg: string; fields: LogFields }>;
} {
  const lines: Array<{ level: LogLevel; msg: string; fields: LogFields }> = [];
  const at =
    (level: LogLevel) =>
    (msg: string, fields: LogFields = {}) =>
      lines.push({ level, msg, fields });
  const logger = {
    lines,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    with: () => logger,
  };
  return logger;
}

describe("a controller's queue under the policy", () => {
  it("logs a failure as a warning, a conflict at debug, a terminal error once as an error with its Status, and retries only the first two", async () => {
    const clock = new FakeClock();
    const log = recordingLogger();
    const queue = controllerQueue({ name: "demo", clock, log });
    const failures: Record<string, unknown> = {
      failing: new Error("backend down"),
      conflicting: new ConflictError("changed"),
      invalid: new TerminalError("refused as invalid", { cause: invalid }),
      throttled: tooMany,
    };
    const attempts: string[] = [];
    queue.start(async (key) => {
      attempts.push(key);
      throw failures[key];
    });
    for (const key of Object.keys(failures)) queue.add(key);
    await settle();
    const told = Object.fromEntries(log.lines.map((line) => [line.fields.key, line]));
    expect(told.failing).toMatchObject({ level: "warn", fields: { retryInMs: 5 } });
    expect(told.conflicting).toMatchObject({ level: "debug", fields: { retryInMs: 5 } });
    expect(told.invalid).toMatchObject({
      level: "error",
      fields: { status: { code: 422, reason: "Invalid", message: expect.stringContaining("spec.tenancy") } },
    });
    expect(told.throttled).toMatchObject({ level: "debug", fields: { retryAfterMs: 1_000 } });
    expect(queue.failures("failing")).toBe(1);
    expect(queue.failures("throttled")).toBe(0);
    expect(queue.failures("invalid")).toBe(0);

    clock.advance(1_000); // past every backoff and the Retry-After
    await settle();
    expect(attempts.filter((key) => key === "invalid")).toHaveLength(1);
    expect(attempts.filter((key) => key === "failing").length).toBeGreaterThan(1);
    expect(attempts.filter((key) => key === "throttled")).toHaveLength(2);
    await queue.shutdown();
  });
});

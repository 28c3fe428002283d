/** `--kube-api-qps`/`--kube-api-burst`: no client-side limit unless asked, as controller-runtime; clear errors otherwise. */
import { describe, expect, it } from "vitest";
import { engineFlags, parseEngineArgs, runUsage } from "../../../src/cli/run.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const flags = (...args: string[]) =>
  engineFlags(parseEngineArgs(["--provider-name=p", ...args], runUsage), runUsage, {}, {});

describe("API rate limit flags", () => {
  it("leave the rate to the API server by default, and with --kube-api-qps=0", () => {
    expect(flags().apiRateLimit).toBeUndefined();
    expect(flags("--kube-api-qps=0").apiRateLimit).toBeUndefined();
  });

  it("limit to qps with a burst of twice that unless --kube-api-burst says otherwise", () => {
    expect(flags("--kube-api-qps=20").apiRateLimit).toEqual({ qps: 20, burst: 40 });
    expect(flags("--kube-api-qps=0.5").apiRateLimit).toEqual({ qps: 0.5, burst: 1 });
    expect(flags("--kube-api-qps=20", "--kube-api-burst=30").apiRateLimit).toEqual({ qps: 20, burst: 30 });
  });

  it("refuse what is not a rate, and a burst without a rate", () => {
    expect(() => flags("--kube-api-qps=fast")).toThrow(UsageError);
    expect(() => flags("--kube-api-qps=-1")).toThrow("--kube-api-qps");
    expect(() => flags("--kube-api-qps=5", "--kube-api-burst=0")).toThrow("--kube-api-burst");
    expect(() => flags("--kube-api-burst=30")).toThrow("needs --kube-api-qps");
  });
});

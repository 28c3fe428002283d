/** `run` and `init` accept the flags exactly as the openMCP operator writes them (Go's `--flag=true`), and the image's state folder. */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { normalizeBooleanAssignments } from "../../../src/cli/flags.ts";
import { engineFlagOptions, engineFlags, parseEngineArgs, runUsage } from "../../../src/cli/run.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const flags = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  engineFlags(parseEngineArgs(args, runUsage), runUsage, {}, env);

describe("flags as the openMCP operator passes them", () => {
  it("takes the Deployment's args for two replicas with metrics on", () => {
    const parsed = flags(
      [
        "--environment=openmcp",
        "--verbosity=INFO",
        "--provider-name=engine-cp",
        "--leader-elect=true",
        "--metrics-bind-address=:8080",
        "--metrics-secure=false",
      ],
      { POD_NAMESPACE: "cp-engine-cp", POD_NAME: "engine-cp-0" },
    );
    expect(parsed).toMatchObject({ providerName: "engine-cp", environment: "openmcp", logLevel: "info" });
    expect(parsed.leaderElection).toMatchObject({
      namespace: "cp-engine-cp",
      name: "engine-cp.engine.openmcp.cloud",
    });
  });

  it("reads every boolean flag's =true and =false (any case) as --flag and --no-flag", () => {
    expect(
      flags(["--provider-name=p", "--leader-elect=false"], { POD_NAMESPACE: "x" }).leaderElection,
    ).toBeUndefined();
    expect(flags(["--provider-name=p", "--schedule=FALSE"]).schedule).toBe(false);
    expect(
      normalizeBooleanAssignments(["--schedule=True", "--kubeconfig=a=b"], engineFlagOptions, runUsage),
    ).toEqual(["--schedule", "--kubeconfig=a=b"]);
  });

  it("refuses a boolean with another value, and --metrics-secure=true, saying why", () => {
    expect(() => flags(["--provider-name=p", "--leader-elect=yes"])).toThrow(
      /--leader-elect takes true or false, not "yes"/,
    );
    expect(() => flags(["--provider-name=p", "--metrics-secure=true"])).toThrow(UsageError);
    expect(() => flags(["--provider-name=p", "--metrics-secure"])).toThrow(/plain HTTP; put TLS in front/);
  });

  it("keeps backend state in $OPENMCP_ENGINE_STATE_DIR when no --state-dir is given (the image sets it)", () => {
    expect(
      flags(["--provider-name=p"], { OPENMCP_ENGINE_STATE_DIR: "/var/lib/openmcp-engine" }).stateDirectory,
    ).toBe("/var/lib/openmcp-engine");
    expect(
      flags(["--provider-name=p", "--state-dir=s"], { OPENMCP_ENGINE_STATE_DIR: "/x" }).stateDirectory,
    ).toBe(resolve("s"));
    expect(flags(["--provider-name=p"]).stateDirectory).toBe(resolve(".state/engine"));
  });
  it("takes any flag the operator cannot pass from OPENMCP_ENGINE_<FLAG>, a flag given winning", () => {
    const fromEnv = flags(["--provider-name=p", "--concurrency=3"], {
      OPENMCP_ENGINE_SCHEDULER_CONFIG_MAP: "openmcp-system/engine-scheduler",
      OPENMCP_ENGINE_BACKEND: "kind",
      OPENMCP_ENGINE_BACKEND_OPTION: "access=network,delay=1s",
      OPENMCP_ENGINE_SCHEDULE: "false",
      OPENMCP_ENGINE_CONCURRENCY: "9",
    });
    expect(fromEnv.schedulerConfig).toEqual({
      configMap: { namespace: "openmcp-system", name: "engine-scheduler" },
    });
    expect(fromEnv.backend).toBe("kind");
    expect(fromEnv.backendOptions).toEqual({ access: "network", delay: "1s" });
    expect(fromEnv.schedule).toBe(false);
    expect(fromEnv.concurrency).toBe(3);
    expect(flags(["--provider-name=p", "--schedule"], { OPENMCP_ENGINE_SCHEDULE: "false" }).schedule).toBe(
      true,
    );
    expect(() => flags(["--provider-name=p"], { OPENMCP_ENGINE_LEADER_ELECT: "yes" })).toThrow(
      /OPENMCP_ENGINE_LEADER_ELECT takes true or false, not "yes"/,
    );
    expect(() => flags(["--provider-name=p"], { OPENMCP_ENGINE_SCHEDULER_CONFIG_MAP: "no-slash" })).toThrow(
      /must look like <namespace>\/<name>/,
    );
  });
});

describe("--resync", () => {
  it("sets each named kind's resync period, from the flag or OPENMCP_ENGINE_RESYNC; a flag given wins", () => {
    expect(flags(["--provider-name=p"]).resyncMs).toEqual({});
    expect(flags(["--provider-name=p", "--resync=Cluster=5m,AccessRequest=30s"]).resyncMs).toEqual({
      Cluster: 300_000,
      AccessRequest: 30_000,
    });
    expect(flags(["--provider-name=p"], { OPENMCP_ENGINE_RESYNC: "Cluster=1m" }).resyncMs).toEqual({
      Cluster: 60_000,
    });
    expect(
      flags(["--provider-name=p", "--resync=Cluster=3m"], { OPENMCP_ENGINE_RESYNC: "Cluster=1m" }).resyncMs,
    ).toEqual({ Cluster: 180_000 });
  });

  it("refuses a kind the engine does not drive, and a period that is no duration, naming them", () => {
    expect(() => flags(["--provider-name=p", "--resync=Clusters=2m"])).toThrow(
      /--resync: "Clusters" is not a kind the engine drives \(Cluster, .*AccessRequest/,
    );
    expect(() => flags(["--provider-name=p", "--resync=Cluster=soon"])).toThrow(UsageError);
    expect(() => flags(["--provider-name=p", "--resync=Cluster=10ms"])).toThrow(/at least 1s/);
  });
});

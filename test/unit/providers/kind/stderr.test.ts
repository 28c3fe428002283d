/** What a failed `kind create` says on its Cluster: kind's ERROR line and the cause, not kubeadm's progress. */
import { describe, expect, it } from "vitest";
import { stderrSummary } from "../../../../src/providers/kind/stderr.ts";

const kubeadmFailure = [
  'Creating cluster "omc-1" ...',
  " ✗ Starting control-plane 🕹️",
  'ERROR: failed to create cluster: failed to init node with kubeadm: command "docker exec --privileged omc-1-control-plane kubeadm init" failed with error: exit status 1',
  'Command Output: I1126 09:15:35.856025     172 initconfiguration.go:262] loading configuration from "/kind/kubeadm.conf"',
  ...Array.from(
    { length: 40 },
    (_, i) =>
      `W1126 09:15:35.8${String(i).padStart(5, "0")}     172 common.go:100] your configuration file uses a deprecated API spec`,
  ),
  "[wait-control-plane] Waiting for the kubelet to boot up the control plane",
  "error execution phase wait-control-plane: could not initialize a Kubernetes cluster",
  "context deadline exceeded",
  "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow.(*Runner).Run.func1",
  "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow/runner.go:260",
  "runtime.main",
  "runtime/proc.go:290",
  "runtime.goexit",
  "runtime/asm_amd64.s:1771",
].join("\n");

describe("the summary of kind's stderr", () => {
  it("keeps the ERROR line and the failed command's last words, leaving klog's progress and the stack trace out", () => {
    const summary = stderrSummary(kubeadmFailure, 4);
    expect(summary.split(" | ")).toEqual([
      expect.stringMatching(/^ERROR: failed to create cluster: failed to init node with kubeadm/),
      "[wait-control-plane] Waiting for the kubelet to boot up the control plane",
      "error execution phase wait-control-plane: could not initialize a Kubernetes cluster",
      "context deadline exceeded",
    ]);
  });

  it("without an ERROR line, keeps the last lines", () => {
    expect(stderrSummary("one\ntwo\nthree\n", 2)).toBe("two | three");
  });
});

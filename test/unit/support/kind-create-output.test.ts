import { describe, expect, it } from "vitest";
import { whatKindSaid } from "../../support/containers.ts";

describe("what a failed kind create said", () => {
  it("is kind's ERROR line and kubeadm's error line, not the Go stack after them", () => {
    const output = [
      "kind create cluster --name omc failed: Command failed",
      "ERROR: failed to create cluster: failed to init node with kubeadm: exit status 1",
      'I1130 02:23:23.588817 174 round_trippers.go:632] "Response" verb="POST" status="" milliseconds=0',
      "error: error execution phase wait-control-plane: cannot obtain client without bootstrap",
      "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow.(*Runner).Run.func1",
      "\truntime/proc.go:290",
      "runtime.goexit",
      "\truntime/asm_amd64.s:1771",
      "",
    ].join("\n");
    expect(whatKindSaid(output)).toBe(
      "ERROR: failed to create cluster: failed to init node with kubeadm: exit status 1 | " +
        "error: error execution phase wait-control-plane: cannot obtain client without bootstrap",
    );
  });

  it("is the last three lines when neither says error", () => {
    expect(whatKindSaid("one\ntwo\n\nthree\nfour\n")).toBe("two | three | four");
  });
});

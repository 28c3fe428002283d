/** The test's stand-in for clusterctl's processing of components YAML, held to clusterctl's rules. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in plain strings is clusterctl's syntax under test.
import { describe, expect, it } from "vitest";
import {
  clusterctlComponents,
  clusterctlVariables,
  substituteClusterctlVariables,
} from "../../support/clusterctl.ts";

const components = `apiVersion: v1
kind: Namespace
metadata: {name: prov-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: manager, namespace: prov-system}
spec:
  template:
    spec:
      containers:
        - name: manager
          args: ["--gates=Topology=\${CLUSTER_TOPOLOGY:=false}", "--ns=$(POD_NAMESPACE)"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: manager}
subjects: [{kind: ServiceAccount, name: manager, namespace: prov-system}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating
  annotations: {cert-manager.io/inject-ca-from: prov-system/serving-cert}
webhooks: [{name: v.example.com, clientConfig: {service: {name: webhook, namespace: prov-system}}}]
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: serving-cert, namespace: prov-system}
spec: {dnsNames: [webhook.prov-system.svc], secretName: webhook-cert}
`;

describe("clusterctl's processing of a provider's components", () => {
  it("lists the variables once each, with their defaults", () => {
    expect(clusterctlVariables("${A} ${B:=x} ${A} ${C=}")).toEqual([
      { name: "A" },
      { name: "B", default: "x" },
      { name: "C", default: "" },
    ]);
  });

  it("substitutes a set value, else the default (:= also for an empty value), and leaves $( and $$-escapes as clusterctl does", () => {
    expect(
      substituteClusterctlVariables("${A:=d} ${B:=d} ${C=d} $(POD) $${X}", { A: "a", B: "", C: "" }),
    ).toBe("a d  $(POD) ${X}");
  });

  it("refuses variables that have neither a value nor a default, naming every one", () => {
    expect(() => substituteClusterctlVariables("${B} ${A} ${C:=c}")).toThrow(
      "value for variables [A, B] is not set",
    );
  });

  it("moves every namespaced object and reference into the target namespace, labels all, and puts Namespaces and cert-manager first", () => {
    const objects = clusterctlComponents(components, {
      manifestLabel: "infrastructure-x",
      targetNamespace: "team-a",
    });
    expect(objects.map((o) => o.kind)).toEqual([
      "Namespace",
      "Certificate",
      "Deployment",
      "ClusterRoleBinding",
      "ValidatingWebhookConfiguration",
    ]);
    const text = JSON.stringify(objects);
    expect(text).not.toContain("prov-system");
    expect(text).toContain("webhook.team-a.svc");
    expect(text).toContain('"cert-manager.io/inject-ca-from":"team-a/serving-cert"');
    expect(text).toContain("Topology=false");
    for (const object of objects)
      expect(object.metadata?.labels).toMatchObject({
        "clusterctl.cluster.x-k8s.io": "",
        "cluster.x-k8s.io/provider": "infrastructure-x",
      });
  });

  it("keeps the components' own Namespace without a target, and refuses two Namespaces", () => {
    const objects = clusterctlComponents(components, { manifestLabel: "cluster-api" });
    expect(objects.find((o) => o.kind === "Deployment")?.metadata?.namespace).toBe("prov-system");
    expect(() =>
      clusterctlComponents(`${components}---\napiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n`, {
        manifestLabel: "cluster-api",
      }),
    ).toThrow("no more than one resource with Kind Namespace");
  });
});

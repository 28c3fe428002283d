/** What `openmcp-engine explain` prints, as one text, and the values it prints after its labels. */
import { explain } from "../../src/cli/explain.ts";

/** What `explain <kind> <namespace>/<name>` prints, against the API server of the kubeconfig file. */
export async function explained(kind: string, key: string, kubeconfigPath: string): Promise<string> {
  let output = "";
  await explain([kind, key, "--kubeconfig", kubeconfigPath], (line) => {
    output += `${line}\n`;
  });
  return output;
}

/** The value printed after a label such as `State:`. */
export function explainedField(output: string, label: string): string {
  return new RegExp(`^${label}\\s+(.*)$`, "m").exec(output)?.[1] ?? "";
}

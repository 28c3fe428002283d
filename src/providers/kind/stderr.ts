/** What of kind's and its commands' stderr people are shown: the cause in one line, no credentials. */

/** A klog info or warning line (`I1126 09:15:35.856025 …`, `W1126 …`) of a command kind ran: progress, not the cause. */
const KLOG_PROGRESS = /^[IW]\d{4} \d{2}:\d{2}:\d{2}/;
/** A line of a Go stack trace kubeadm prints after its error (`runtime.main`, `runtime/proc.go:290`): no words. */
const STACK_TRACE = /^\S+$/;

/**
 * One line for people from kind's stderr, redacted: its last `ERROR:` line and the last `count - 1` lines of
 * the failed command's output after it, klog's progress and Go's stack trace left out (kubeadm's cause
 * comes between pages of progress and its stack trace), else its last `count` lines.
 */
export function stderrSummary(text: string, count: number): string {
  const lines = redact(text)
    .split("\n")
    .map((line) => line.trim().replace(/^Command Output: /, ""))
    .filter((line) => line !== "");
  const error = lines.findLastIndex((line) => line.startsWith("ERROR:"));
  const cause = lines.slice(error + 1).filter((line) => !KLOG_PROGRESS.test(line) && !STACK_TRACE.test(line));
  return (error >= 0 ? [lines[error] ?? "", ...cause.slice(-(count - 1))] : lines.slice(-count))
    .map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line))
    .join(" | ");
}

/**
 * Removes anything that looks like a credential: PEM blocks (to their END line, or to the first line
 * that is not base64), lines naming kubeconfig secret fields, and long base64 runs.
 */
export function redact(text: string): string {
  const out: string[] = [];
  let inPem = false;
  for (const line of text.split("\n")) {
    if (inPem) {
      if (/-----END [A-Z ]+-----/.test(line)) {
        inPem = false;
        continue;
      }
      if (/^\s*[A-Za-z0-9+/=]*\s*$/.test(line)) continue;
      inPem = false;
    }
    if (/-----BEGIN [A-Z ]+-----/.test(line)) {
      out.push("[redacted]");
      inPem = !/-----END [A-Z ]+-----/.test(line);
    } else if (/(-data|token|password|secret)\s*[:=]/i.test(line)) {
      out.push("[redacted]");
    } else {
      out.push(line.replace(/[A-Za-z0-9+/=_-]{64,}/g, "[redacted]"));
    }
  }
  return out.join("\n");
}

import { isNode, type Document, type LineCounter } from "yaml";
import type { ConfigIssue } from "./config-issues.js";

/**
 * Adds the file line each issue points at (its own node, or the nearest parent that
 * is written, for a missing key) and orders the issues as they appear in the file.
 */
export function placeIssues(issues: ConfigIssue[], doc: Document, lines: LineCounter): ConfigIssue[] {
  const placed = issues.map((issue, index) => {
    const keys = issue.keys;
    if (!keys) return { issue, index };
    for (let n = keys.length; n >= 0; n--) {
      const node = n === 0 ? doc.contents : doc.getIn(keys.slice(0, n), true);
      if (isNode(node) && node.range) {
        return { issue: { ...issue, line: lines.linePos(node.range[0]).line }, index };
      }
    }
    return { issue, index };
  });
  placed.sort((a, b) => (a.issue.line ?? 0) - (b.issue.line ?? 0) || a.index - b.index);
  return placed.map((p) => p.issue);
}

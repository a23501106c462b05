/** One line naming the first problem a schema (zod) found and where: `path: message`, `root` for the value itself. */
export function firstIssue(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }, root = "(root)"): string {
  const issue = error.issues[0];
  return `${issue?.path.map(String).join(".") || root}: ${issue?.message ?? "invalid"}`;
}

// Counts the ways out of the type checker in the example's own TypeScript (src/*.ts, not the
// generated src/api.d.ts): casts (`x as T`, `<T>x`), `any`, and non-null assertions (`x!`).
// Prints each count; exits 1 unless every one is 0. Reads the syntax tree, not the text.
import { readdirSync, readFileSync } from "node:fs";
import ts from "typescript";

const counts = { casts: 0, any: 0, "non-null assertions": 0 };
const where = [];
const files = readdirSync("src").filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"));
for (const name of files) {
  const path = `src/${name}`;
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    let kind = null;
    if (ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.getText() === "const")) kind = "casts";
    else if (ts.isTypeAssertionExpression(node)) kind = "casts";
    else if (node.kind === ts.SyntaxKind.AnyKeyword) kind = "any";
    else if (ts.isNonNullExpression(node)) kind = "non-null assertions";
    if (kind) {
      counts[kind] += 1;
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      where.push(`${path}:${line + 1}: ${kind}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
for (const line of where) console.log(line);
console.log(`${files.join(", ")}: ${Object.entries(counts).map(([kind, n]) => `${n} ${kind}`).join(", ")}`);
process.exit(Object.values(counts).every((n) => n === 0) ? 0 : 1);

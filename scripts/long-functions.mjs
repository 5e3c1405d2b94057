// Lists functions over N lines (default 200) in src, server, storage and tools: node scripts/long-functions.mjs [root] [N]
import ts from 'typescript';
import fs from 'node:fs';
import { execSync } from 'node:child_process';
const root = process.argv[2] || '.';
const limit = Number(process.argv[3] || 200);
const files = execSync(`find src server storage tools -name '*.ts'`, { cwd: root }).toString().trim().split('\n');
for (const f of files) {
  const text = fs.readFileSync(`${root}/${f}`, 'utf8');
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (
      ts.isFunctionDeclaration(n) ||
      ts.isFunctionExpression(n) ||
      ts.isArrowFunction(n) ||
      ts.isMethodDeclaration(n)
    ) {
      const s = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
      const e = sf.getLineAndCharacterOfPosition(n.getEnd()).line + 1;
      if (e - s + 1 > limit) {
        let name = n.name?.getText() ?? '';
        if (!name && n.parent && ts.isVariableDeclaration(n.parent)) name = n.parent.name.getText();
        if (!name && n.parent && ts.isPropertyAssignment(n.parent)) name = n.parent.name.getText();
        console.log(`${e - s + 1}\t${f}:${s}\t${name || '<anon>'}`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}

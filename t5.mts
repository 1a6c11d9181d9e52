import { chunkDocument } from './src/knowledge/chunk-document.ts';
import fs from 'node:fs';
const t = fs.readFileSync(process.argv[2] ?? 'docs/api.md','utf8');
const chunks = chunkDocument(t, { size: +(process.argv[3] ?? 512), overlap: 64, markdown: true });
for (const c of chunks.slice(0, 100)) console.log(JSON.stringify(c.headingPath), c.tokens, JSON.stringify(c.text.slice(0, 80)));
console.log('max', Math.max(...chunks.map(c=>c.tokens)), 'n', chunks.length);
let s=performance.now(); let n=0; for (let i=0;i<30;i++) n+=chunkDocument(t,{size:512,overlap:64,markdown:true}).length; console.log('chunks/s', n/((performance.now()-s)/1000));

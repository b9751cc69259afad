import { ensureDevCerts } from './dev-certs.js';

/** `npm start` step: a development CA and localhost certificate under certs/dev, made once. */
const dir = process.argv[2] ?? 'certs/dev';
if (await ensureDevCerts(dir)) process.stderr.write(`made a development CA and serving certificate in ${dir}/\n`);

// Child process for the crash test: captures pass 0 completely, begins pass 1, appends two
// records, then dies by SIGKILL in the middle of the pass (no handler, no cleanup runs).
import { NativeBundleWriter } from '../../main/core/bundle/native-bundle-writer.ts';
import { nativeHeader, smallRecords } from './bundle-fixtures.ts';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: capture-crash-child.ts <dir>');
const records = smallRecords();
const writer = NativeBundleWriter.create(dir, nativeHeader());
writer.beginPass(0, 'prefill');
for (const record of records[0] ?? []) writer.appendRecord(record);
writer.endPass('text');
writer.beginPass(1, 'decode');
writer.appendRecord((records[1] ?? [])[0]!);
writer.appendRecord((records[1] ?? [])[1]!);
process.kill(process.pid, 'SIGKILL');

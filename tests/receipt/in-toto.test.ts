// in-toto Statement v1 as receipts carry it: the fixed types, sha256 subjects with confined
// names, a JSON-object predicate, and the canonical payload bytes.
import { describe, expect, it } from 'vitest';
import { ReceiptError } from '../../main/core/receipt/errors.ts';
import { GATE_RECEIPT_PREDICATE_TYPE, IN_TOTO_STATEMENT_TYPE, StatementSchema, buildStatement, statementPayload } from '../../main/core/receipt/in-toto.ts';
import { samplePredicate } from './receipt-fixtures.ts';

const sha = (fill: string): string => fill.repeat(64);

describe('buildStatement', () => {
  it('builds an in-toto Statement v1 with the gate-receipt predicate type', () => {
    const statement = buildStatement(
      [
        { name: 'libengine.so', digest: { sha256: sha('1') } },
        { name: 'reference/manifest.json', digest: { sha256: sha('2') } },
      ],
      { seals: ['FIDELITY: OK'] },
    );
    expect(statement).toEqual({
      _type: 'https://in-toto.io/Statement/v1',
      subject: [
        { name: 'libengine.so', digest: { sha256: sha('1') } },
        { name: 'reference/manifest.json', digest: { sha256: sha('2') } },
      ],
      predicateType: 'https://trace-inspector.dev/gate-receipt/v1',
      predicate: { seals: ['FIDELITY: OK'] },
    });
    expect(IN_TOTO_STATEMENT_TYPE).toBe(statement._type);
    expect(GATE_RECEIPT_PREDICATE_TYPE).toBe(statement.predicateType);
  });

  it('returns the predicate as signed: non-finite numbers as strings, -0 as 0', () => {
    const statement = buildStatement([{ name: 'w', digest: { sha256: sha('a') } }], samplePredicate());
    const boundaries = statement.predicate['boundaries'] as Record<string, unknown>[];
    expect(boundaries[1]).toMatchObject({ max_abs: 'NaN', max_ulp: 'Infinity', min: '-Infinity' });
    expect(Object.is(boundaries[0]?.['rmse'], 0)).toBe(true);
  });

  it('serialises the payload as canonical JSON: sorted keys, no whitespace', () => {
    const statement = buildStatement([{ name: 'w', digest: { sha256: sha('a') } }], { z: 1, a: [NaN] });
    expect(statementPayload(statement).toString('utf8')).toBe(
      `{"_type":"https://in-toto.io/Statement/v1","predicate":{"a":["NaN"],"z":1},"predicateType":"https://trace-inspector.dev/gate-receipt/v1","subject":[{"digest":{"sha256":"${sha('a')}"},"name":"w"}]}`,
    );
  });

  it.each([
    ['no subjects', [], 'at least one subject'],
    ['an uppercase digest', [{ name: 'w', digest: { sha256: sha('A') } }], 'sha256'],
    ['a short digest', [{ name: 'w', digest: { sha256: 'abc' } }], 'sha256'],
    ['an absolute name', [{ name: '/etc/passwd', digest: { sha256: sha('a') } }], 'absolute'],
    ['a ".." name', [{ name: '../secret', digest: { sha256: sha('a') } }], '".."'],
    ['a backslash name', [{ name: 'a\\b', digest: { sha256: sha('a') } }], 'backslash'],
    ['an empty name', [{ name: '', digest: { sha256: sha('a') } }], 'empty'],
    ['a "./" name', [{ name: './w', digest: { sha256: sha('a') } }], '"." segment'],
    [
      'a repeated name',
      [
        { name: 'w', digest: { sha256: sha('a') } },
        { name: 'w', digest: { sha256: sha('b') } },
      ],
      'appears twice',
    ],
  ])('refuses %s with E_STATEMENT', (_label, subjects, message) => {
    let thrown: unknown;
    try {
      buildStatement(subjects, {});
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ReceiptError);
    expect((thrown as ReceiptError).code).toBe('E_STATEMENT');
    expect((thrown as ReceiptError).message).toContain(message);
  });

  it('refuses a predicate that is not a plain JSON object', () => {
    expect(() => buildStatement([{ name: 'w', digest: { sha256: sha('a') } }], [1, 2])).toThrow(ReceiptError);
    expect(() => buildStatement([{ name: 'w', digest: { sha256: sha('a') } }], { when: new Date(0) })).toThrow(/predicate: .*when: a Date/);
  });
});

describe('StatementSchema', () => {
  const valid = buildStatement([{ name: 'w', digest: { sha256: sha('a') } }], {});

  it.each([
    ['another statement type', { ...valid, _type: 'https://in-toto.io/Statement/v0.1' }],
    ['another predicate type', { ...valid, predicateType: 'https://slsa.dev/provenance/v1' }],
    ['an unknown top-level field', { ...valid, extra: 1 }],
    ['a predicate that is an array', { ...valid, predicate: [] }],
    ['a subject with an extra digest field', { ...valid, subject: [{ name: 'w', digest: { sha256: sha('a'), md5: 'x' } }] }],
  ])('rejects %s', (_label, statement) => {
    expect(StatementSchema.safeParse(statement).success).toBe(false);
  });
});

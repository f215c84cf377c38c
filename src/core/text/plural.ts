/**
 * A count with its noun in agreement (issue 33: "1 recently written entities"): every message that
 * counts something says "1 entity" and "2 entities".
 * @example plural(1, 'entity', 'entities') // '1 entity'
 * @example plural(3, 'observation') // '3 observations'
 */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

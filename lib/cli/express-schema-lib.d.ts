// The few global types `rotifer wrap` needs to read the types of a gene's express (see
// express-schema.js): loading TypeScript's own libraries would take seconds, and only the
// shapes of values matter here. Not a library for genes.
interface Array<T> { length: number; [n: number]: T }
interface ReadonlyArray<T> { readonly length: number; readonly [n: number]: T }
interface Boolean {}
interface Function {}
interface CallableFunction extends Function {}
interface NewableFunction extends Function {}
interface IArguments {}
interface Number {}
interface Object {}
interface RegExp {}
interface String { readonly length: number }
interface Symbol {}
interface TemplateStringsArray extends ReadonlyArray<string> {}
interface PromiseLike<T> { then<R>(onfulfilled: (value: T) => R): PromiseLike<R> }
interface Promise<T> { then<R>(onfulfilled: (value: T) => R): Promise<R> }
interface Date {}
interface ArrayBuffer {}
interface Uint8Array { readonly length: number }
interface Map<K, V> {}
interface Set<T> {}
type PropertyKey = string | number | symbol
type Record<K extends keyof any, T> = { [P in K]: T }
type Partial<T> = { [P in keyof T]?: T[P] }
type Required<T> = { [P in keyof T]-?: T[P] }
type Readonly<T> = { readonly [P in keyof T]: T[P] }
type Pick<T, K extends keyof T> = { [P in K]: T[P] }
type Exclude<T, U> = T extends U ? never : T
type Extract<T, U> = T extends U ? T : never
type Omit<T, K extends keyof any> = Pick<T, Exclude<keyof T, K>>
type NonNullable<T> = T & {}
type Awaited<T> = T extends null | undefined ? T : T extends object & { then(onfulfilled: infer F, ...args: infer _): any } ? F extends (value: infer V, ...args: infer _) => any ? Awaited<V> : never : T
declare class TextEncoder { encode(input?: string): Uint8Array }
declare class TextDecoder { constructor(label?: string, options?: object); decode(input?: Uint8Array): string }

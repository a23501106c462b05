/** `target` with one member replaced by `value`; every other member is `target`'s own, bound to it. */
export function overriding<T extends object, K extends keyof T>(target: T, member: K, value: T[K]): T {
  return new Proxy(target, {
    get(inner, property, receiver) {
      if (property === member) return value;
      const own: unknown = Reflect.get(inner, property, receiver);
      return typeof own === "function" ? own.bind(inner) : own;
    },
  });
}

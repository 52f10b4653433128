(() => {
  const RealDate = Date;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(0).toString();
    return args.length ? new RealDate(...args) : new RealDate(0);
  }
  FixedDate.prototype = RealDate.prototype;
  FixedDate.now = () => 0;
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, "constructor", { value: FixedDate });
  globalThis.Date = FixedDate;
  let seed = 0x2545f491;
  Math.random = () => {
    seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
    return (seed >>> 0) / 4294967296;
  };
  globalThis.process = Object.freeze({ env: Object.freeze({}) });
  delete globalThis.performance;
  // Native loops that never ask the interrupt handler (and allocate nothing to meet the memory
  // limit): bound the lengths they may be given, so no project spins past its deadline in one.
  const apply = Reflect.apply, toNumber = Number, MAX_LENGTH = 1 << 24, MAX_KEYS = 10000;
  const AP = Array.prototype, isArray = Array.isArray, RealArray = Array;
  const getPrototypeOf = Object.getPrototypeOf, describe = Object.getOwnPropertyDescriptor;
  const hasOwn = Object.hasOwn;
  const proxies = new WeakSet(), isProxy = (o) => apply(WeakSet.prototype.has, proxies, [o]);
  const tooLong = (what) => { throw new RangeError(what + " on a length over " + MAX_LENGTH); };
  // The length a native loop will run to, bounded. It must be a plain number: not read through
  // a Proxy or a getter, which could answer this check one length and the call another.
  const checkLength = (o, what) => {
    if (o == null) return 0;
    for (let p = Object(o); p != null; p = getPrototypeOf(p)) {
      if (isProxy(p)) throw new TypeError(what + " on a Proxy (or an object made from one): not in chant");
      if (isArray(p)) break;
      const d = describe(p, "length");
      if (d) {
        if (!hasOwn(d, "value") || typeof d.value !== "number") {
          throw new TypeError(what + " on an object whose length is not a plain number: not in chant");
        }
        break;
      }
    }
    const n = toNumber(o.length);
    if (n > MAX_LENGTH) tooLong(what);
    return n;
  };
  for (const name of ["join", "toString", "toLocaleString", "reverse", "copyWithin", "shift",
      "unshift", "sort", "fill", "slice", "splice", "concat"]) {
    const original = AP[name];
    Object.defineProperty(AP, name, { writable: true, configurable: true, value: function (...args) {
      checkLength(this, "Array.prototype." + name);
      if (name === "concat") for (const a of args) if (isArray(a)) checkLength(a, "Array.prototype.concat");
      return apply(original, this, args);
    } });
  }
  // JSON.stringify walks every index of every array it meets: bound their lengths first, in
  // JavaScript (which the interrupt handler stops).
  const stringify = JSON.stringify;
  const RealSet = Set, setHas = Set.prototype.has, setAdd = Set.prototype.add;
  const checkArrays = (v, seen) => {
    if (v === null || typeof v !== "object" || apply(setHas, seen, [v])) return;
    apply(setAdd, seen, [v]);
    if (isArray(v)) {
      const n = checkLength(v, "JSON.stringify");
      for (let i = 0; i < n; i++) checkArrays(v[i], seen);
    } else {
      for (const k in v) checkArrays(v[k], seen);
    }
  };
  JSON.stringify = function (value, ...rest) {
    checkArrays(value, new RealSet());
    return apply(stringify, JSON, [value, ...rest]);
  };
  // flat walks every nested array to its depth: their lengths, summed in JavaScript (which the
  // interrupt handler stops), are bounded.
  const flatOriginal = AP.flat;
  const flatLength = (a, depth) => {
    let n = checkLength(a, "Array.prototype.flat");
    if (depth >= 1) for (let i = 0, end = n; i < end; i++) if (isArray(a[i])) n += flatLength(a[i], depth - 1);
    if (n > MAX_LENGTH) tooLong("Array.prototype.flat");
    return n;
  };
  Object.defineProperty(AP, "flat", { writable: true, configurable: true, value: function (depth) {
    flatLength(this, depth === undefined ? 1 : toNumber(depth));
    return apply(flatOriginal, this, arguments);
  } });
  const fromOriginal = RealArray.from;
  RealArray.from = function from(items, ...rest) {
    checkLength(items, "Array.from");
    return apply(fromOriginal, this, [items, ...rest]);
  };
  // A Proxy's ownKeys result is checked for duplicates in quadratic time: bound its length.
  // Every other trap is found on the handler itself, as without this.
  const RealProxy = Proxy, reflectOwnKeys = Reflect.ownKeys;
  const bounded = (handler) => {
    if (handler === null || (typeof handler !== "object" && typeof handler !== "function")) return handler;
    const h = Object.create(handler);
    Object.defineProperty(h, "ownKeys", { value: function (target) {
      const trap = handler.ownKeys;
      const keys = trap == null ? reflectOwnKeys(target) : apply(trap, handler, [target]);
      if (keys != null && toNumber(keys.length) > MAX_KEYS) {
        throw new RangeError("a Proxy's ownKeys returned more than " + MAX_KEYS + " keys");
      }
      return keys;
    } });
    return h;
  };
  const remember = (p) => { apply(WeakSet.prototype.add, proxies, [p]); return p; };
  const BoundedProxy = function Proxy(target, handler) {
    if (new.target === undefined) throw new TypeError("Constructor Proxy requires 'new'");
    return remember(new RealProxy(target, bounded(handler)));
  };
  BoundedProxy.revocable = (target, handler) => {
    const r = RealProxy.revocable(target, bounded(handler));
    remember(r.proxy);
    return r;
  };
  globalThis.Proxy = BoundedProxy;
  // Nothing here may block the thread.
  delete globalThis.Atomics;
  delete globalThis.SharedArrayBuffer;
})();

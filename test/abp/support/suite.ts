/**
 * The set-up most ABP test files share: one headless Chromium and the three loopback origins for
 * the whole describe block, started before its tests and closed after them.
 */
import type { Browser } from "playwright-core";
import { launchChromium, type Origins, startOrigins } from "./browser.js";

export interface ChromiumSuite {
  /** The browser; read it inside a hook or test, once `before` has run. */
  readonly browser: Browser;
  readonly origins: Origins;
}

/** Registers the before/after hooks in the calling describe block. */
export function useChromiumSuite(): ChromiumSuite {
  let browser: Browser | undefined;
  let origins: Origins | undefined;
  before(async () => {
    browser = await launchChromium();
    origins = await startOrigins();
  });
  after(async () => {
    await browser?.close();
    await origins?.close();
  });
  return {
    get browser(): Browser {
      if (browser === undefined) throw new Error("the browser is read before the suite's before hook ran");
      return browser;
    },
    get origins(): Origins {
      if (origins === undefined) throw new Error("the origins are read before the suite's before hook ran");
      return origins;
    },
  };
}

/*
 * Stand-in for Apple's https://applepay.cdn-apple.com/jsapi/1.latest/apple-pay-sdk.js in the browser
 * tests (the suite serves this file at that URL). It defines the <apple-pay-button> custom element the
 * way Apple documents it (https://developer.apple.com/documentation/applepayontheweb/displaying-apple-pay-buttons-using-javascript):
 * attributes buttonstyle ("black" | "white" | "white-outline"), type ("plain", "buy", "check-out", ...)
 * and locale; CSS custom properties --apple-pay-button-width, --apple-pay-button-height,
 * --apple-pay-button-border-radius, --apple-pay-button-padding and --apple-pay-button-box-sizing.
 * It renders a rounded button reading "Buy with  Pay" where the Apple glyph (U+F8FF, Apple fonts
 * only) is missing: "Buy with Apple Pay". The element has role=button and an aria-label, is focusable
 * (tabindex 0), is activated by Enter and Space (a click event, which carries the user activation the
 * page needs for new ApplePaySession) and is not shown when it has the `hidden` attribute.
 * It does not define ApplePaySession: that is applepay-standin.js.
 */
(function () {
  'use strict';
  if (window.customElements.get('apple-pay-button')) return;

  // Words before the Apple Pay mark, by button type (Apple's button types, English).
  var LABELS = {
    plain: '', buy: 'Buy with', 'set-up': 'Set up', donate: 'Donate with', 'check-out': 'Check out with',
    book: 'Book with', subscribe: 'Subscribe with', reload: 'Reload with', 'add-money': 'Add money with',
    'top-up': 'Top up with', order: 'Order with', rent: 'Rent with', support: 'Support with',
    contribute: 'Contribute with', tip: 'Tip with', continue: 'Continue with', pay: 'Pay with',
  };
  var APPLE_GLYPH = '\uF8FF';

  // Whether this browser has a font with the Apple glyph: compare its width with a surely missing one.
  function hasAppleGlyph() {
    try {
      var ctx = document.createElement('canvas').getContext('2d');
      ctx.font = '16px -apple-system, system-ui, sans-serif';
      var apple = ctx.measureText(APPLE_GLYPH).width;
      var missing = ctx.measureText('\uFFFF').width;
      return apple > 0 && Math.abs(apple - missing) > 0.1 && /Mac|iPhone|iPad/.test(navigator.platform);
    } catch (e) {
      return false;
    }
  }

  class ApplePayButton extends HTMLElement {
    static get observedAttributes() { return ['buttonstyle', 'type', 'locale']; }

    constructor() {
      super();
      var root = this.attachShadow({ mode: 'open' });
      root.innerHTML =
        '<style>' +
        ':host { display: inline-block; box-sizing: var(--apple-pay-button-box-sizing, border-box);' +
        ' width: var(--apple-pay-button-width, 140px); height: var(--apple-pay-button-height, 30px);' +
        ' min-width: 100px; min-height: 30px; border-radius: var(--apple-pay-button-border-radius, 5px);' +
        ' padding: var(--apple-pay-button-padding, 0); cursor: pointer; vertical-align: middle; }' +
        ':host([hidden]) { display: none !important; }' +
        ':host(:focus-visible) { outline: 2px solid #0a84ff; outline-offset: 2px; }' +
        '.button { box-sizing: border-box; width: 100%; height: 100%; border-radius: inherit; display: flex;' +
        ' align-items: center; justify-content: center; gap: 0.25em; font: 500 15px -apple-system, system-ui, sans-serif;' +
        ' white-space: nowrap; overflow: hidden; background: #000; color: #fff; border: 1px solid #000; user-select: none; }' +
        ':host([buttonstyle="white"]) .button { background: #fff; color: #000; border-color: #fff; }' +
        ':host([buttonstyle="white-outline"]) .button { background: #fff; color: #000; border-color: #000; }' +
        '</style><div class="button" part="button"><span class="label"></span></div>';
      this._label = root.querySelector('.label');
      this.addEventListener('keydown', function (event) {
        if (event.key === 'Enter' || event.key === ' ' || event.key === 'Spacebar') {
          event.preventDefault();
          this.click();
        }
      });
    }

    connectedCallback() {
      if (!this.hasAttribute('role')) this.setAttribute('role', 'button');
      if (!this.hasAttribute('tabindex')) this.setAttribute('tabindex', '0');
      this._render();
    }

    attributeChangedCallback() { this._render(); }

    _render() {
      if (!this._label) return;
      var type = (this.getAttribute('type') || 'plain').toLowerCase();
      var words = Object.prototype.hasOwnProperty.call(LABELS, type) ? LABELS[type] : LABELS.plain;
      var spoken = (words ? words + ' ' : '') + 'Apple Pay';
      var shown = hasAppleGlyph() ? (words ? words + ' ' : '') + APPLE_GLYPH + ' Pay' : spoken;
      this._label.textContent = shown;
      this.setAttribute('aria-label', spoken);
      var locale = this.getAttribute('locale');
      if (locale) this._label.setAttribute('lang', locale); else this._label.removeAttribute('lang');
    }
  }

  window.customElements.define('apple-pay-button', ApplePayButton);
})();

// The example shop's checkout: drives the Apple Pay sheet with payservice's answers, through
// bridge.py's POST /rpc. No build step, no framework.
'use strict';

// ---- time budget of a payment
//
// Apple Pay cancels the sheet when the page has not completed an event within 30 s
// (SHEET_TIMEOUT_MS). Everything the page does after onpaymentauthorized fits inside it:
//   authorizePayment           at most AUTHORIZE_TIMEOUT_MS (10 s)
//   processOrder, repeated     until PAYMENT_BUDGET_MS (24 s) after the event: each attempt is cut
//                              off after ORDER_ATTEMPT_MS (4 s), RETRY_PAUSE_MS (1 s) between
//                              attempts, every attempt the same request (the same charge token,
//                              params and bytes), so payservice answers a repeat with the stored
//                              outcome and never charges twice
//   completePayment            the 6 s left is the margin for the sheet to get it in time.
// Why 4 s: an answer that is coming at all comes in a second or two (one store transaction and one
// gateway call); one that has not come in 4 s is more likely lost or held on the way than slow, and
// a repeat of it costs nothing (while the first is still running, the bridge sends the repeat after
// it, and it is answered from the store). With authorizePayment's usual second, 4 s + 1 s leaves
// four or five attempts in the budget, so a sale whose first answer is held still ends in the sheet.
// When processOrder has not answered by the budget's end, the page does not let the sheet time out
// (which would read as a cancelled payment): it closes the sheet itself with abort(), tells the
// shopper it is checking the payment, and sends the same processOrder again until it knows the
// outcome.
const SHEET_TIMEOUT_MS = 30000;
const AUTHORIZE_TIMEOUT_MS = 10000;
const PAYMENT_BUDGET_MS = SHEET_TIMEOUT_MS - 6000;
const ORDER_ATTEMPT_MS = 4000;
const RETRY_PAUSE_MS = 1000;
// After the sheet is closed: ask again after 2, 4, 8, 15, 15, ... s.
const CHECK_PAUSES_MS = [2000, 4000, 8000, 15000];
// Any other call (pricing, the sheet's other events) is cut off after this long.
const CALL_TIMEOUT_MS = 15000;

// The shop's locale (the page's lang) formats its money; dates are shown in the shopper's time zone.
const LOCALE = document.documentElement.lang || 'en-US';

const catalog = JSON.parse(document.getElementById('catalog').textContent);
const $ = (id) => document.getElementById(id);
const $products = $('products');
const $couponForm = $('coupon-form');
const $coupon = $('coupon');
const $couponStatus = $('coupon-status');
const $summary = $('summary');
const $emptyCart = $('empty-cart');
const $pay = $('pay');
const $message = $('message');
const $shop = $('shop');
const $receipt = $('receipt');

// ---- formatting

const moneyFormats = new Map();
// Amounts are decimal strings on the wire and stay strings: Intl.NumberFormat formats a string
// as the exact decimal it is, never through a binary float.
function money(amount, currencyCode) {
  if (!moneyFormats.has(currencyCode)) {
    moneyFormats.set(currencyCode, new Intl.NumberFormat(LOCALE, { style: 'currency', currency: currencyCode }));
  }
  return moneyFormats.get(currencyCode).format(amount);
}

const dateFormat = new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium' });
function day(date) {
  return date instanceof Date ? dateFormat.format(date) : '';
}

function sameDay(a, b) {
  return a instanceof Date && b instanceof Date && a.toDateString() === b.toDateString();
}

// "month", "14 days", "2 weeks": one interval of a recurring line.
function interval(unit, count) {
  const n = count || 1;
  if (n === 1) return unit;
  return `${n} ${unit}s`;
}

// The same as an adjective: "month", "14-day".
function intervalAdjective(unit, count) {
  const n = count || 1;
  return n === 1 ? unit : `${n}-${unit}`;
}

// ---- talking to the bridge

/// A call that did not give a result: `httpStatus` 0 when no answer came (the network, a
/// timeout), else the bridge's status; `code` the JSON-RPC error code when there was one.
class RPCError extends Error {
  constructor(message, httpStatus, code, data) {
    super(message);
    this.httpStatus = httpStatus;
    this.code = code;
    this.data = data;
  }

  /// No answer, or one that says nothing happened yet: the same call may be sent again.
  get unanswered() {
    return this.httpStatus === 0 || this.httpStatus === 502 || this.httpStatus === 503 || this.httpStatus === 504;
  }
}

// Every member whose name ends in "Date" (recurringPaymentStartDate, deferredPaymentDate,
// freeCancellationDate, ...), at any depth, is RFC 3339 text on the wire and a Date for Apple Pay JS.
function reviveDates(key, value) {
  if (typeof value === 'string' && key.endsWith('Date')) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return value;
}

// POST /rpc {method, params} -> the JSON-RPC result; throws RPCError. Cut off after `timeoutMs`.
function rpc(method, params, timeoutMs = CALL_TIMEOUT_MS) {
  return send(rpcRequest(method, params), timeoutMs);
}

// One call's body, made once: a call that may be repeated is sent as these very bytes each time.
function rpcRequest(method, params) {
  return Object.freeze({ method, body: JSON.stringify({ method, params }) });
}

// Sends one rpcRequest; the same contract as rpc().
async function send({ method, body }, timeoutMs) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), Math.max(timeoutMs, 1));
  try {
    let response;
    try {
      response = await fetch('/rpc', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
        signal: abort.signal,
        credentials: 'same-origin',
      });
    } catch (err) {
      throw new RPCError(`${method}: no answer (${abort.signal.aborted ? 'timed out' : err.message})`, 0);
    }
    let text;
    try {
      text = await response.text();
    } catch (err) {
      throw new RPCError(`${method}: the answer was cut off (${abort.signal.aborted ? 'timed out' : err.message})`, 0);
    }
    let answer;
    try {
      answer = JSON.parse(text, reviveDates);
    } catch (err) {
      throw new RPCError(`${method}: an unreadable answer (HTTP ${response.status})`, response.status);
    }
    if (!response.ok) {
      const error = (answer && answer.error) || {};
      const details = error.data && Array.isArray(error.data.errors)
        ? ': ' + error.data.errors.map((e) => `${e.path} ${e.message}`).join('; ')
        : '';
      throw new RPCError(`${method}: ${error.message || 'HTTP ' + response.status}${details}`, response.status, error.code, error.data);
    }
    return answer;
  } finally {
    clearTimeout(timer);
  }
}

// Developer detail goes to the console (and the bridge's log has the request); shoppers read
// `shopperText`. A warning, not an error: a declined card or a slow network is not a bug.
function report(what, err) {
  console.warn(`[shop] ${what}:`, err && err.message ? err.message : err);
}

function unreachableText() {
  return 'We can’t reach the shop right now. Check your connection and try again.';
}

// ---- messages: each has a source, so that what clears it is the thing it was about

let messageSource = '';
function showMessage(text, kind = '', source = '') {
  $message.textContent = text;
  $message.className = kind;
  messageSource = text ? source : '';
}

function clearMessage(source) {
  if (messageSource === source) showMessage('');
}

// ---- the products, with payservice's prices

function productBySku(sku) {
  return catalog.find((product) => product.sku === sku);
}

function renderProducts() {
  for (const product of catalog) {
    const row = document.createElement('div');
    row.className = 'product';
    row.dataset.sku = product.sku;
    const text = document.createElement('div');
    const kind = document.createElement('p');
    kind.className = 'kind';
    kind.textContent = product.kind;
    const name = document.createElement('p');
    const strong = document.createElement('strong');
    strong.textContent = product.name;
    name.append(strong);
    const description = document.createElement('p');
    description.textContent = product.description;
    const price = document.createElement('p');
    price.className = 'price';
    price.textContent = '…';
    const terms = document.createElement('p');
    terms.className = 'terms';
    text.append(kind, name, description, price, terms);

    const quantity = document.createElement('div');
    quantity.className = 'quantity';
    const less = document.createElement('button');
    less.type = 'button';
    less.textContent = '−';
    less.setAttribute('aria-label', `One less ${product.name}`);
    const input = document.createElement('input');
    input.type = 'number';
    input.inputMode = 'numeric';
    input.min = '0';
    input.max = '99';
    input.value = '0';
    input.dataset.sku = product.sku;
    input.setAttribute('aria-label', `Quantity of ${product.name}`);
    const more = document.createElement('button');
    more.type = 'button';
    more.textContent = '+';
    more.setAttribute('aria-label', `One more ${product.name}`);
    const step = (delta) => {
      input.value = String(Math.min(99, Math.max(0, quantityOf(input) + delta)));
      cartChanged();
    };
    less.addEventListener('click', () => step(-1));
    more.addEventListener('click', () => step(1));
    input.addEventListener('input', cartChanged);
    quantity.append(less, input, more);
    row.append(text, quantity);
    $products.append(row);
  }
}

// Each product priced alone, once, by payservice: its lines say what is paid once and what repeats.
async function loadPrices() {
  await Promise.all(catalog.map(async (product) => {
    const row = $products.querySelector(`.product[data-sku="${product.sku}"]`);
    try {
      const answer = await rpc('createPaymentRequest', { items: [{ sku: product.sku, quantity: 1 }] });
      const { price, terms } = productTerms(answer.paymentRequest);
      row.querySelector('.price').textContent = price;
      row.querySelector('.terms').textContent = terms;
    } catch (err) {
      report(`price of ${product.sku}`, err);
      row.querySelector('.price').textContent = 'Price unavailable right now';
    }
  }));
}

// The product's own lines of a one-product payment request: the ones with a payment timing, or
// the first line of a one-off product.
function productTerms(request) {
  const currency = request.currencyCode;
  const recurring = request.recurringPaymentRequest;
  if (recurring) {
    const regular = recurring.regularBilling;
    const every = `${money(regular.amount, currency)} every ${interval(regular.recurringPaymentIntervalUnit, regular.recurringPaymentIntervalCount)}`;
    const trial = recurring.trialBilling;
    if (!trial) return { price: every, terms: '' };
    const length = intervalAdjective(trial.recurringPaymentIntervalUnit, trial.recurringPaymentIntervalCount);
    return { price: every, terms: `Starts with a ${length} trial for ${money(trial.amount, currency)}.` };
  }
  const reload = request.automaticReloadPaymentRequest;
  if (reload) {
    const billing = reload.automaticReloadBilling;
    return {
      price: `${money(billing.amount, currency)} top-up`,
      terms: `Topped up again whenever the balance falls below ${money(billing.automaticReloadPaymentThresholdAmount, currency)}.`,
    };
  }
  const deferred = request.deferredPaymentRequest;
  if (deferred) {
    const billing = deferred.deferredBilling;
    return { price: money(billing.amount, currency), terms: `Nothing to pay today: charged on ${day(billing.deferredPaymentDate)}.` };
  }
  return { price: money(request.lineItems[0].amount, currency), terms: '' };
}

// ---- the cart

function quantityOf(input) {
  const quantity = Math.floor(Number(input.value));
  return Number.isFinite(quantity) && quantity > 0 ? Math.min(quantity, 99) : 0;
}

function cartItems() {
  const items = [];
  for (const input of $products.querySelectorAll('input[data-sku]')) {
    const quantity = quantityOf(input);
    if (quantity > 0) items.push({ sku: input.dataset.sku, quantity });
  }
  return items;
}

function emptyCart() {
  for (const input of $products.querySelectorAll('input[data-sku]')) input.value = '0';
}

// The coupon the shopper applied on the page ('' for none): checked by payservice before it is
// used, and then shown in the sheet's own coupon field, where the shopper can see and change it.
let couponCode = '';
// A coupon payservice refused is remembered so that it is not sent again.
let refusedCoupon = '';

function cartKey() {
  return JSON.stringify([cartItems(), couponCode]);
}

// One payment request describes at most one plan: a subscription, an automatic reload or a pre-order.
function mixedPlans(items) {
  const plans = new Set(items.map((item) => productBySku(item.sku).plan).filter(Boolean));
  return plans.size > 1;
}

// ---- the summary

// What a line of the summary means for the shopper: what is paid once and what repeats.
function describeLine(item, request) {
  const currency = request.currencyCode;
  switch (item.paymentTiming) {
    case 'recurring': {
      const recurring = request.recurringPaymentRequest || {};
      const trial = recurring.trialBilling;
      const start = item.recurringPaymentStartDate;
      const length = interval(item.recurringPaymentIntervalUnit, item.recurringPaymentIntervalCount);
      if (trial && trial.label === item.label) {
        const ends = item.recurringPaymentEndDate ? `, until ${day(item.recurringPaymentEndDate)}` : '';
        const trialLength = intervalAdjective(item.recurringPaymentIntervalUnit, item.recurringPaymentIntervalCount);
        return `Once, today: a ${trialLength} trial${ends}.`;
      }
      const from = sameDay(start, new Date()) ? 'starting today' : `from ${day(start)}`;
      const until = item.recurringPaymentEndDate ? `, until ${day(item.recurringPaymentEndDate)}` : ', until you cancel';
      return `${trial ? 'Then every' : 'Every'} ${length}, ${from}${until}.`;
    }
    case 'deferred': {
      const deferred = request.deferredPaymentRequest || {};
      const cancel = deferred.freeCancellationDate ? ` Free cancellation until ${day(deferred.freeCancellationDate)}.` : '';
      return `Charged on ${day(item.deferredPaymentDate)}, not today.${cancel}`;
    }
    case 'automaticReload':
      return item.automaticReloadPaymentThresholdAmount
        ? `Today, and again whenever the balance falls below ${money(item.automaticReloadPaymentThresholdAmount, currency)}.`
        : 'Today, and again whenever the balance runs low.';
    default:
      return '';
  }
}

function renderSummary(request) {
  $summary.replaceChildren();
  $summary.classList.remove('updating');
  if (!request) return;
  const row = (label, amount, note, className) => {
    const tr = $summary.insertRow();
    if (className) tr.className = className;
    const left = tr.insertCell();
    left.textContent = label;
    if (note) {
      const span = document.createElement('div');
      span.className = 'note';
      span.textContent = note;
      left.append(span);
    }
    tr.insertCell().textContent = money(amount, request.currencyCode);
  };
  for (const item of request.lineItems || []) row(item.label, item.amount, describeLine(item, request));
  // Before Apple Pay gives the address, tax is the shop's default rate and shipping its first method.
  row('Total due today', request.total.amount, 'Shipping and tax are confirmed for your address in Apple Pay.', 'total');
}

// ---- preparing the payment request ahead of the click

// An ApplePaySession must be created synchronously inside the click's handler (a user gesture),
// so the payment request for the cart on the page is fetched ahead of the click.
let prepared = null; // {key, minimumVersion, paymentRequest}
let preparing = 0;   // sequence number of the latest createPaymentRequest: stale answers are dropped

let debounce = null;
function cartChanged() {
  prepared = null;
  $summary.classList.add('updating');
  clearTimeout(debounce);
  debounce = setTimeout(prepare, 250);
}

async function prepare() {
  const key = cartKey();
  const items = cartItems();
  const sequence = ++preparing;
  prepared = null;
  $emptyCart.hidden = items.length > 0;
  if (items.length === 0) {
    renderSummary(null);
    $pay.hidden = true;
    clearMessage('cart');
    clearMessage('wait');
    return;
  }
  if (mixedPlans(items)) {
    renderSummary(null);
    $pay.hidden = true;
    showMessage('A subscription, a Café Card and a pre-order each need a checkout of their own: buy them one at a time.', 'error', 'cart');
    return;
  }
  const params = { items };
  if (couponCode) params.couponCode = couponCode;
  let answer;
  try {
    answer = await rpc('createPaymentRequest', params);
  } catch (err) {
    if (sequence !== preparing) return;
    report('createPaymentRequest', err);
    renderSummary(null);
    $pay.hidden = true;
    showMessage(err.unanswered ? unreachableText() : 'This cart can’t be checked out right now. Please change it or try again later.', 'error', 'cart');
    return;
  }
  if (sequence !== preparing) return; // the cart changed meanwhile
  const request = answer.paymentRequest;
  showCouponAnswer(answer.errors || [], request);
  prepared = { key: cartKey(), minimumVersion: answer.minimumVersion, paymentRequest: request };
  renderSummary(request);
  clearMessage('cart');
  clearMessage('wait');
  showPayButton(answer.minimumVersion);
}

function showCouponAnswer(errors, request) {
  const couponError = errors.find((error) => error.code === 'couponCodeInvalid' || error.code === 'couponCodeExpired');
  if (couponError && couponCode) {
    // Refused: shown here, and never sent to the sheet (which would show it without its cause).
    refusedCoupon = couponCode;
    $couponStatus.textContent = `${couponCode}: ${couponError.message}`;
    $couponStatus.className = 'error';
    couponCode = '';
  } else if (request.couponCode) {
    const discount = (request.lineItems || []).find((item) => item.amount.startsWith('-'));
    $couponStatus.textContent = discount
      ? `${request.couponCode} applied: ${discount.label} ${money(discount.amount, request.currencyCode)}.`
      : `${request.couponCode} applied.`;
    $couponStatus.className = 'applied';
  } else if (!refusedCoupon) {
    $couponStatus.textContent = '';
    $couponStatus.className = '';
  }
}

$couponForm.addEventListener('submit', (event) => {
  event.preventDefault();
  couponCode = $coupon.value.trim().toUpperCase();
  refusedCoupon = '';
  $couponStatus.textContent = couponCode ? 'Checking…' : '';
  $couponStatus.className = '';
  prepared = null;
  prepare();
});

// ---- Apple Pay

let applePayAvailable = false;
function checkApplePay() {
  if (!window.ApplePaySession) {
    showMessage('Apple Pay isn’t available in this browser. Open this page in Safari on an iPhone, iPad or Mac with Apple Pay set up.', '', 'applepay');
    return;
  }
  try {
    applePayAvailable = Boolean(ApplePaySession.canMakePayments());
  } catch (err) {
    // canMakePayments throws on a page that is not served over HTTPS on a verified domain.
    report('ApplePaySession.canMakePayments', err);
    showMessage('Apple Pay can’t be used on this page right now.', 'error', 'applepay');
    return;
  }
  if (!applePayAvailable) {
    showMessage('Apple Pay isn’t set up on this device. Add a card in Wallet to pay with Apple Pay.', '', 'applepay');
  }
}

// The button shows when the cart has a payment request this device's Apple Pay can show.
function showPayButton(minimumVersion) {
  if (!applePayAvailable) {
    $pay.hidden = true;
    return;
  }
  if (!ApplePaySession.supportsVersion(minimumVersion)) {
    // Subscriptions, reloads and pre-orders need a recent Apple Pay (minimumVersion).
    $pay.hidden = true;
    showMessage('Apple Pay on this device is too old for this order. Update the device, or buy one-off items on their own.', 'error', 'cart');
    return;
  }
  $pay.hidden = false;
}

// The newest Apple Pay JS version this page is written for (UPDATE_MEMBERS): a session opened at a
// newer one could be given members whose meaning the page does not know.
const NEWEST_VERSION = 14;

// The version to open the sheet at: the highest the device supports, from NEWEST_VERSION down to
// the cart's `minimumVersion` (the lowest its features need, which showPayButton checked), so that
// every update member the device can take reaches the sheet (a payment method update's errors, from
// 14: a card payservice refuses is refused on the sheet, not when it closes).
function sessionVersion(minimumVersion) {
  for (let version = NEWEST_VERSION; version > minimumVersion; version--) {
    if (ApplePaySession.supportsVersion(version)) return version;
  }
  return minimumVersion;
}

// The open sheet's checkout, or null: one session at a time.
let checkout = null;

function startCheckout() {
  if (!applePayAvailable) return;
  if (checkout) return; // the sheet is already open: a second click does nothing
  if (!prepared || prepared.key !== cartKey()) {
    showMessage('One moment: the price is being updated.', '', 'wait');
    return;
  }
  let session;
  let version;
  try {
    version = sessionVersion(prepared.minimumVersion);
    session = new ApplePaySession(version, prepared.paymentRequest);
  } catch (err) {
    report('new ApplePaySession', err);
    showMessage('Apple Pay couldn’t start. Please try again.', 'error', 'checkout');
    return;
  }
  checkout = new Checkout(session, version, prepared.paymentRequest);
  showMessage('');
  session.begin();
}

/// One sheet, from begin() to its end: the state every event updates and every call sends.
class Checkout {
  constructor(session, version, paymentRequest) {
    this.session = session;
    this.version = version; // the session's Apple Pay JS version: which update members it takes
    this.request = paymentRequest;
    this.items = cartItems();
    // What the sheet shows as selected: its first shipping method and the coupon in its field.
    const first = (paymentRequest.shippingMethods || [])[0];
    this.shippingMethod = first ? first.identifier : null;
    this.shippingContact = null;
    this.couponCode = paymentRequest.couponCode || '';
    this.paymentMethod = null;
    this.ended = false;

    session.onvalidatemerchant = (event) => this.handle('startMerchantSession', () => this.validateMerchant(event));
    session.onshippingcontactselected = (event) => this.handle('selectShippingContact', async () => {
      this.shippingContact = event.shippingContact;
      const result = await rpc('selectShippingContact', this.params({ shippingContact: event.shippingContact }));
      this.shippingMethod = result.shippingMethod || this.shippingMethod;
      this.complete('completeShippingContactSelection', update(result, 'shippingContact', this.version));
    });
    session.onshippingmethodselected = (event) => this.handle('selectShippingMethod', async () => {
      this.shippingMethod = event.shippingMethod.identifier;
      const result = await rpc('selectShippingMethod', this.params({}));
      this.complete('completeShippingMethodSelection', update(result, 'shippingMethod', this.version));
    });
    session.onpaymentmethodselected = (event) => this.handle('selectPaymentMethod', async () => {
      this.paymentMethod = cardOf(event.paymentMethod);
      // Not a card payservice can price (no network or type): priced without a card adjustment.
      const method = this.paymentMethod ? 'selectPaymentMethod' : 'computeSummaryItems';
      const result = await rpc(method, this.params({}));
      this.complete('completePaymentMethodSelection', update(result, 'paymentMethod', this.version));
    });
    session.oncouponcodechanged = (event) => this.handle('changeCouponCode', async () => {
      this.couponCode = (event.couponCode || '').trim();
      const result = await rpc('changeCouponCode', this.params({ couponCode: this.couponCode }));
      this.shippingMethod = result.shippingMethod || this.shippingMethod;
      this.complete('completeCouponCodeChange', update(result, 'couponCode', this.version));
    });
    session.onpaymentauthorized = (event) => this.handle('payment', () => this.pay(event.payment, performance.now()));
    session.oncancel = () => {
      if (this.ended) return;
      this.ended = true;
      showMessage('Payment cancelled. You have not been charged.', '', 'checkout');
      this.finish();
    };
  }

  // The params every sheet event shares: the state, leaving out what the sheet has not given yet.
  // The coupon is the one in the sheet's field, which the shopper sees.
  params(extra) {
    const params = { items: this.items };
    if (this.shippingMethod) params.shippingMethod = this.shippingMethod;
    if (this.shippingContact) params.shippingContact = this.shippingContact;
    if (this.couponCode) params.couponCode = this.couponCode;
    if (this.paymentMethod) params.paymentMethod = this.paymentMethod;
    return Object.assign(params, extra);
  }

  // Runs an event's work; a failure ends the sheet at once with a message, so it never waits.
  handle(what, work) {
    work().catch((err) => {
      report(what, err);
      this.fail(err instanceof RPCError && err.unanswered
        ? unreachableText()
        : 'Something went wrong with this payment. You have not been charged; please try again.');
    });
  }

  complete(method, value) {
    if (this.ended) return; // the sheet was closed meanwhile (cancelled, timed out)
    this.session[method](value);
  }

  // Closes the sheet without claiming an outcome, and says why on the page.
  fail(message) {
    if (this.ended) return;
    this.ended = true;
    try { this.session.abort(); } catch (err) { report('abort', err); }
    showMessage(message, 'error', 'checkout');
    this.finish();
  }

  finish() {
    if (checkout === this) checkout = null;
    prepare();
  }

  async validateMerchant(event) {
    const answer = await rpc('startMerchantSession', { validationURL: event.validationURL, domain: location.hostname });
    if (answer.status === 'success') {
      this.complete('completeMerchantValidation', answer.merchantSession);
      return;
    }
    report('startMerchantSession', new Error(`${answer.code || 'failure'}: ${answer.message || ''}`));
    this.fail('Apple Pay isn’t available for this shop right now. Please try again later.');
  }

  // onpaymentauthorized: authorize, charge, complete, all within PAYMENT_BUDGET_MS of `start`.
  async pay(payment, start) {
    this.shippingContact = payment.shippingContact || this.shippingContact;
    const params = { items: this.items, shippingMethod: this.shippingMethod, payment: { token: payment.token } };
    if (payment.shippingContact) params.payment.shippingContact = payment.shippingContact;
    if (payment.billingContact) params.payment.billingContact = payment.billingContact;
    if (this.couponCode) params.couponCode = this.couponCode;
    if (this.request.applicationData) params.applicationData = this.request.applicationData;

    let authorization;
    try {
      authorization = await rpc('authorizePayment', params, AUTHORIZE_TIMEOUT_MS);
    } catch (err) {
      // No charge token reached the page, so nothing can have been charged.
      report('authorizePayment', err);
      this.closeWithFailure(err.unanswered ? unreachableText() : 'This payment couldn’t be confirmed. You have not been charged; please try again.');
      return;
    }
    if (authorization.status !== 'success') {
      const errors = (authorization.errors || []).map((error) => sheetError(error, 'authorizePayment'));
      const fixable = errors.filter((error) => error.code !== 'unknown');
      if (fixable.length === 0 || fixable.length < errors.length) {
        // Nothing the shopper can fix in this sheet (the card, the payment data): it closes.
        this.closeWithFailure(errors.length > 0 ? errors.find((e) => e.code === 'unknown').message
          : 'This payment couldn’t be confirmed. You have not been charged; please try again.');
        return;
      }
      // Contact or coupon errors: the sheet shows them and stays open, so the shopper may fix
      // them and pay again.
      this.complete('completePayment', { status: ApplePaySession.STATUS_FAILURE, errors });
      showMessage(errors[0].message, 'error', 'checkout');
      return;
    }

    // Charge it: the same items, shipping method, contacts and coupon the token is bound to.
    const order = {
      chargeToken: authorization.chargeToken,
      items: this.items,
      shippingMethod: this.shippingMethod,
      shippingContact: payment.shippingContact || {},
      amount: authorization.amount,
      currencyCode: authorization.currencyCode,
    };
    if (payment.billingContact) order.billingContact = payment.billingContact;
    if (this.couponCode) order.couponCode = this.couponCode;

    // Made once: every attempt, in the sheet and after it, sends the same bytes.
    const call = rpcRequest('processOrder', order);
    const result = await processOrderWithin(call, start + PAYMENT_BUDGET_MS);
    if (result === null) {
      // No outcome in time: close the sheet ourselves rather than let it time out as "cancelled".
      this.ended = true;
      try { this.session.abort(); } catch (err) { report('abort', err); }
      showMessage('We’re checking your payment. Please keep this page open: you will not be charged twice.', 'pending', 'checkout');
      const known = await processOrderUntilKnown(call);
      this.settle(known, authorization, payment);
      return;
    }
    this.settle(result, authorization, payment);
  }

  // The outcome of processOrder, known: the receipt, or what went wrong.
  settle(result, authorization, payment) {
    if (result.status === 'succeeded') {
      const completion = { status: ApplePaySession.STATUS_SUCCESS };
      // authorizePayment's, present when the merchant configures Wallet order tracking.
      if (authorization.orderDetails) completion.orderDetails = authorization.orderDetails;
      this.complete('completePayment', completion);
      this.ended = true;
      if (checkout === this) checkout = null;
      showReceipt(result, this.request, payment.shippingContact);
      return;
    }
    report('processOrder', new Error(`${result.failureCode}: ${result.message}`));
    const message = failureText(result);
    if (this.ended) {
      // The sheet was already closed: the page says it.
      showMessage(message, 'error', 'checkout');
      this.finish();
      return;
    }
    this.closeWithFailure(message);
  }

  // completePayment with a failure the shopper cannot fix in the sheet (an `unknown` error): the
  // sheet shows it and closes; the page says it too, and the shopper may begin again.
  closeWithFailure(message) {
    this.complete('completePayment', {
      status: ApplePaySession.STATUS_FAILURE,
      errors: [new ApplePayError('unknown', undefined, message)],
    });
    this.ended = true;
    showMessage(message, 'error', 'checkout');
    this.finish();
  }
}

// processOrder is exactly-once under its charge token: the same request again returns the stored
// outcome, never a second charge. `call` is one rpcRequest, sent as it is every time. Until
// `deadline` (performance.now()), an answer lost, late (no answer within ORDER_ATTEMPT_MS) or held
// on the way, and a gateway that is briefly unavailable, are asked again. Null when no outcome is
// known by then.
async function processOrderWithin(call, deadline) {
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return null;
    try {
      const result = await send(call, Math.min(ORDER_ATTEMPT_MS, left));
      if (!(result.status === 'failed' && result.failureCode === 'gateway_unavailable')) return result;
      report('processOrder', new Error(result.message));
    } catch (err) {
      report('processOrder', err);
      if (!err.unanswered) return { status: 'failed', failureCode: 'refused', message: err.message };
    }
    await pause(Math.min(RETRY_PAUSE_MS, Math.max(0, deadline - performance.now())));
  }
}

// After the sheet is closed: the same processOrder until its outcome is known.
async function processOrderUntilKnown(call) {
  for (let attempt = 0; ; attempt++) {
    await pause(CHECK_PAUSES_MS[Math.min(attempt, CHECK_PAUSES_MS.length - 1)]);
    const result = await processOrderWithin(call, performance.now() + CALL_TIMEOUT_MS);
    if (result !== null) return result;
  }
}

function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// What a shopper reads for a processOrder that did not succeed.
function failureText(result) {
  switch (result.failureCode) {
    case 'card_declined':
      return result.declineCode === 'insufficient_funds'
        ? 'Your card was declined for insufficient funds. Try another card.'
        : 'Your card was declined. Try another card.';
    case 'expired_card':
      return 'This card has expired. Try another card.';
    case 'processing_error':
      return 'Your card couldn’t be processed. Try again, or use another card.';
    case 'out_of_stock': {
      const short = (result.errors || []).map((line) => {
        const product = productBySku(line.sku);
        return `${product ? product.name : line.sku} (${line.available} left)`;
      });
      return `Sorry, we don’t have enough of ${short.join(', ') || 'these items'}. Change the quantity and try again. You have not been charged.`;
    }
    case 'amount_mismatch':
      return 'The price changed while you were paying. You have not been charged; check the new total and pay again.';
    case 'invalid_charge_token':
      return 'This payment couldn’t be confirmed in time. You have not been charged; please pay again.';
    default:
      return 'The payment didn’t go through. You have not been charged; please try again later.';
  }
}

// payservice's ApplePayErrors for the sheet, from the call `what`. Contact and coupon errors are
// written for the sheet; an `unknown` one carries developer detail (which check failed), so the
// shopper reads a summary.
function sheetError(error, what) {
  if (error.code === 'unknown') {
    report(what, new Error(error.message));
    return new ApplePayError('unknown', undefined, 'This card can’t be used for this purchase. Try another card.');
  }
  return new ApplePayError(error.code, error.contactField, error.message);
}

// The Apple Pay JS version from which each update dictionary has `errors` and
// `newShippingMethods` (Apple's "Apple Pay on the Web" reference; where it names no version, the
// version that added the dictionary's other late members): a shipping method update never has
// errors, a payment method update has them from version 14.
const UPDATE_MEMBERS = {
  shippingContact: { errors: 3, newShippingMethods: 3 },
  shippingMethod: { newShippingMethods: 14 },
  paymentMethod: { errors: 14, newShippingMethods: 14 },
  couponCode: { errors: 12, newShippingMethods: 12 },
};

// A payservice pricing result -> the update for its event at the session's Apple Pay JS version:
// the last summary item is the total.
function update(result, event, version) {
  const items = result.summaryItems;
  const value = { newTotal: items[items.length - 1], newLineItems: items.slice(0, -1) };
  const since = UPDATE_MEMBERS[event];
  if (version >= (since.newShippingMethods || Infinity) && Array.isArray(result.shippingMethods)) {
    value.newShippingMethods = result.shippingMethods;
  }
  if (version >= (since.errors || Infinity) && Array.isArray(result.errors) && result.errors.length > 0) {
    value.errors = result.errors.map((error) => sheetError(error, `${event} update`));
  }
  const plans = {
    recurringPaymentRequest: 'newRecurringPaymentRequest',
    automaticReloadPaymentRequest: 'newAutomaticReloadPaymentRequest',
    deferredPaymentRequest: 'newDeferredPaymentRequest',
    multiTokenContexts: 'newMultiTokenContexts',
  };
  for (const [member, updateMember] of Object.entries(plans)) {
    if (result[member] !== undefined) value[updateMember] = result[member];
  }
  return value;
}

function cardOf(paymentMethod) {
  if (!paymentMethod || !paymentMethod.network || !paymentMethod.type) return null;
  const card = { network: paymentMethod.network, type: paymentMethod.type };
  if (typeof paymentMethod.displayName === 'string') card.displayName = paymentMethod.displayName;
  return card;
}

// ---- after the purchase

function showReceipt(result, request, shippingContact) {
  $('receipt-order').textContent = result.orderId;
  $('receipt-total').textContent = money(result.amount, result.currencyCode);
  const lines = $('receipt-lines');
  lines.replaceChildren();
  for (const item of (result.order && result.order.items) || []) {
    const li = document.createElement('li');
    li.textContent = `${item.quantity} × ${item.name}: ${money(item.amount, result.currencyCode)}`;
    lines.append(li);
  }
  const next = [];
  const recurring = request.recurringPaymentRequest;
  if (recurring) {
    const regular = recurring.regularBilling;
    next.push(`Your subscription continues at ${money(regular.amount, request.currencyCode)} every ${interval(regular.recurringPaymentIntervalUnit, regular.recurringPaymentIntervalCount)} from ${day(regular.recurringPaymentStartDate)}, until you cancel.`);
  }
  const reload = request.automaticReloadPaymentRequest;
  if (reload) {
    const billing = reload.automaticReloadBilling;
    next.push(`Your card is topped up with ${money(billing.amount, request.currencyCode)} whenever its balance falls below ${money(billing.automaticReloadPaymentThresholdAmount, request.currencyCode)}.`);
  }
  const deferred = request.deferredPaymentRequest;
  if (deferred) {
    const billing = deferred.deferredBilling;
    next.push(`${money(billing.amount, request.currencyCode)} will be charged on ${day(billing.deferredPaymentDate)}, when it ships.`);
    if (deferred.freeCancellationDate) next.push(`You can cancel free of charge until ${day(deferred.freeCancellationDate)}.`);
  }
  const plan = recurring || reload || deferred;
  if (plan && plan.managementURL) next.push('Manage it from your account page.');
  if (shippingContact && shippingContact.emailAddress) next.push(`We’ll email ${shippingContact.emailAddress} when your order ships.`);
  $('receipt-next').textContent = next.join(' ');

  emptyCart();
  couponCode = '';
  refusedCoupon = '';
  $coupon.value = '';
  $couponStatus.textContent = '';
  $couponStatus.className = '';
  prepared = null;
  renderSummary(null);
  $pay.hidden = true;
  showMessage('');
  $shop.hidden = true;
  $receipt.hidden = false;
  $receipt.scrollIntoView({ block: 'start' });
}

$('continue').addEventListener('click', () => {
  $receipt.hidden = true;
  $shop.hidden = false;
  prepare();
});

// ---- start

renderProducts();
$pay.addEventListener('click', startCheckout);
checkApplePay();
loadPrices();
prepare();

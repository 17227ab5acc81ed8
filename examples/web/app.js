// The example shop's checkout: drives the Apple Pay sheet with payservice's answers, through
// bridge.py's POST /rpc. No build step, no framework.
'use strict';

// ---- the checkout's state: one object, updated by every event of the sheet

const state = {
  items: [],             // [{sku, quantity}] from the page
  shippingMethod: null,  // identifier the sheet shows as selected
  shippingContact: null, // the sheet's (redacted until authorization) shipping contact
  couponCode: '',        // as typed on the page or in the sheet
  paymentMethod: null,   // {displayName, network, type}: card surcharges and discounts depend on it
};

// The payment request for the current cart, fetched ahead of the click: an ApplePaySession must be
// created synchronously inside the click handler (a user gesture), so there is no time to ask then.
let prepared = null;     // {key, minimumVersion, paymentRequest}
let preparing = 0;       // sequence number of the latest createPaymentRequest, so stale answers are dropped
let session = null;
let prepareFailed = false; // the message shown is prepare()'s error, to clear once it succeeds

const catalog = JSON.parse(document.getElementById('catalog').textContent);
const $products = document.getElementById('products');
const $coupon = document.getElementById('coupon');
const $summary = document.getElementById('summary');
const $pay = document.getElementById('pay');
const $message = document.getElementById('message');

// ---- talking to the bridge

class RPCError extends Error {
  constructor(message, httpStatus, code) {
    super(message);
    this.httpStatus = httpStatus;
    this.code = code;
  }
}

// Every member whose name ends in "Date" (recurringPaymentStartDate, recurringPaymentEndDate,
// deferredPaymentDate, freeCancellationDate, ...), at any depth, is RFC 3339 text on the wire and a
// Date for Apple Pay JS.
function reviveDates(key, value) {
  if (typeof value === 'string' && key.endsWith('Date')) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return value;
}

// POST /rpc {method, params} -> the JSON-RPC result; throws RPCError for the error (HTTP 4xx/5xx).
async function rpc(method, params, timeoutMs = 25000) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs); // the sheet gives up after about 30 s
  let response;
  try {
    response = await fetch('/rpc', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method, params }),
      signal: abort.signal,
      credentials: 'same-origin',
    });
  } catch (err) {
    throw new RPCError(`The shop could not be reached (${method}).`, 0);
  } finally {
    clearTimeout(timer);
  }
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text, reviveDates);
  } catch (err) {
    throw new RPCError(`The shop sent an unreadable answer (HTTP ${response.status}).`, response.status);
  }
  if (!response.ok) {
    const error = (body && body.error) || {};
    const details = error.data && Array.isArray(error.data.errors)
      ? ': ' + error.data.errors.map((e) => `${e.path} ${e.message}`).join('; ')
      : '';
    throw new RPCError(`${error.message || 'HTTP ' + response.status}${details}`, response.status, error.code);
  }
  return body;
}

// ---- the page: products, coupon, summary

function renderProducts() {
  for (const product of catalog) {
    const row = document.createElement('div');
    row.className = 'product';
    const text = document.createElement('div');
    const kind = document.createElement('p');
    kind.className = 'kind';
    kind.textContent = product.kind;
    const name = document.createElement('p');
    name.innerHTML = '<strong></strong>';
    name.firstChild.textContent = product.name;
    const description = document.createElement('p');
    description.textContent = product.description;
    text.append(kind, name, description);
    const quantity = document.createElement('input');
    quantity.type = 'number';
    quantity.min = '0';
    quantity.max = '99';
    quantity.value = '0';
    quantity.dataset.sku = product.sku;
    quantity.setAttribute('aria-label', `Quantity of ${product.name}`);
    quantity.addEventListener('input', cartChanged);
    row.append(text, quantity);
    $products.append(row);
  }
}

function cartItems() {
  const items = [];
  for (const input of $products.querySelectorAll('input[data-sku]')) {
    const quantity = Math.floor(Number(input.value));
    if (quantity > 0) items.push({ sku: input.dataset.sku, quantity });
  }
  return items;
}

function cartKey() {
  return JSON.stringify([cartItems(), $coupon.value.trim()]);
}

function showMessage(text, kind = '') {
  $message.textContent = text;
  $message.className = kind;
}

function describeTiming(item, currency) {
  const day = (d) => (d instanceof Date ? d.toISOString().slice(0, 10) : String(d));
  switch (item.paymentTiming) {
    case 'recurring': {
      const every = item.recurringPaymentIntervalCount > 1
        ? `every ${item.recurringPaymentIntervalCount} ${item.recurringPaymentIntervalUnit}s`
        : `every ${item.recurringPaymentIntervalUnit || 'period'}`;
      const from = item.recurringPaymentStartDate ? ` from ${day(item.recurringPaymentStartDate)}` : '';
      const until = item.recurringPaymentEndDate ? ` until ${day(item.recurringPaymentEndDate)}` : '';
      return `${every}${from}${until}`;
    }
    case 'deferred':
      return item.deferredPaymentDate ? `paid on ${day(item.deferredPaymentDate)}` : 'paid later';
    case 'automaticReload':
      return item.automaticReloadPaymentThresholdAmount
        ? `reloaded when the balance is below ${item.automaticReloadPaymentThresholdAmount} ${currency}`
        : 'reloaded automatically';
    default:
      return '';
  }
}

function renderSummary(request) {
  $summary.replaceChildren();
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
    tr.insertCell().textContent = `${amount} ${request.currencyCode}`;
  };
  for (const item of request.lineItems || []) {
    row(item.label, item.amount, describeTiming(item, request.currencyCode));
  }
  row(`Total due today (${request.total.label})`, request.total.amount, '', 'total');
}

let debounce = null;
function cartChanged() {
  clearTimeout(debounce);
  debounce = setTimeout(prepare, 250);
}

// Asks payservice for the payment request of the cart on the page, ahead of the click.
async function prepare() {
  const key = cartKey();
  const items = cartItems();
  const sequence = ++preparing;
  prepared = null;
  if (items.length === 0) {
    renderSummary(null);
    $pay.hidden = true;
    return;
  }
  const params = { items };
  const couponCode = $coupon.value.trim();
  if (couponCode) params.couponCode = couponCode;
  try {
    const answer = await rpc('createPaymentRequest', params);
    if (sequence !== preparing) return; // the cart changed meanwhile
    prepared = { key, minimumVersion: answer.minimumVersion, paymentRequest: answer.paymentRequest };
    renderSummary(answer.paymentRequest);
    $pay.hidden = !applePayAvailable;
    if (prepareFailed) showMessage('');
    prepareFailed = false;
  } catch (err) {
    if (sequence !== preparing) return;
    renderSummary(null);
    $pay.hidden = true;
    showMessage(err.message, 'error');
    prepareFailed = true;
  }
}

// ---- Apple Pay

let applePayAvailable = false;
function checkApplePay() {
  try {
    applePayAvailable = Boolean(window.ApplePaySession && ApplePaySession.canMakePayments());
  } catch (err) {
    // canMakePayments throws on a page that is not served over HTTPS.
    showMessage('Apple Pay needs this page to be served over HTTPS on a domain verified with Apple.', 'error');
    return;
  }
  if (!applePayAvailable) {
    showMessage('Apple Pay is not available in this browser or on this device.');
  }
}

function resetCheckout() {
  state.items = cartItems();
  state.shippingMethod = null;
  state.shippingContact = null;
  state.couponCode = $coupon.value.trim();
  state.paymentMethod = null;
  session = null;
}

// The params every sheet event shares: the state, leaving out what the sheet has not given yet.
function sheetParams(extra) {
  const params = { items: state.items };
  if (state.shippingMethod) params.shippingMethod = state.shippingMethod;
  if (state.shippingContact) params.shippingContact = state.shippingContact;
  if (state.couponCode) params.couponCode = state.couponCode;
  if (state.paymentMethod) params.paymentMethod = state.paymentMethod;
  return Object.assign(params, extra);
}

function toApplePayError(error) {
  return new ApplePayError(error.code, error.contactField, error.message);
}

// A payservice pricing result -> ApplePayShippingContactUpdate, ApplePayShippingMethodUpdate,
// ApplePayPaymentMethodUpdate or ApplePayCouponCodeUpdate: the last summary item is the total.
function toUpdate(result) {
  const items = result.summaryItems;
  const update = { newTotal: items[items.length - 1], newLineItems: items.slice(0, -1) };
  if (Array.isArray(result.shippingMethods)) update.newShippingMethods = result.shippingMethods;
  if (Array.isArray(result.errors) && result.errors.length > 0) {
    update.errors = result.errors.map(toApplePayError);
  }
  const billing = {
    recurringPaymentRequest: 'newRecurringPaymentRequest',
    automaticReloadPaymentRequest: 'newAutomaticReloadPaymentRequest',
    deferredPaymentRequest: 'newDeferredPaymentRequest',
    multiTokenContexts: 'newMultiTokenContexts',
  };
  for (const [member, updateMember] of Object.entries(billing)) {
    if (result[member] !== undefined) update[updateMember] = result[member];
  }
  return update;
}

function cardOf(paymentMethod) {
  if (!paymentMethod || !paymentMethod.network || !paymentMethod.type) return null;
  const card = { network: paymentMethod.network, type: paymentMethod.type };
  if (typeof paymentMethod.displayName === 'string') card.displayName = paymentMethod.displayName;
  return card;
}

async function processOrder(params) {
  // processOrder is exactly-once: the same params again return the stored result, never a second
  // charge. So a lost answer or a gateway that is briefly unavailable is retried.
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await rpc('processOrder', params);
      if (result.status === 'failed' && result.failureCode === 'gateway_unavailable' && attempt < 3) {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        continue;
      }
      return result;
    } catch (err) {
      const retryable = err.httpStatus === 0 || err.httpStatus === 502 || err.httpStatus === 503 || err.httpStatus === 504;
      if (!retryable || attempt >= 3) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
  }
}

function startCheckout() {
  if (!applePayAvailable) return;
  if (!prepared || prepared.key !== cartKey()) {
    showMessage('The price is being updated. Try again in a moment.');
    return;
  }
  const { minimumVersion, paymentRequest } = prepared;
  // The request uses features of Apple Pay JS version minimumVersion (subscriptions, reloads,
  // pre-orders need newer versions): a device that does not support it cannot show this cart.
  if (!ApplePaySession.supportsVersion(minimumVersion)) {
    showMessage('This device’s Apple Pay is too old for this order. Update the device, or buy the one-off items separately.', 'error');
    return;
  }

  resetCheckout();
  showMessage('');
  // The sheet preselects the first shipping method of the request.
  const initialShippingMethod = (paymentRequest.shippingMethods || [])[0];
  state.shippingMethod = initialShippingMethod ? initialShippingMethod.identifier : null;
  if (paymentRequest.couponCode) state.couponCode = paymentRequest.couponCode;

  const current = new ApplePaySession(minimumVersion, paymentRequest);
  session = current;
  let ended = false;

  // Ends the sheet at once and says why: the sheet is never left waiting for an answer.
  const fail = (message) => {
    if (ended) return;
    ended = true;
    try { current.abort(); } catch (err) { /* already closed */ }
    showMessage(message, 'error');
    resetCheckout();
    prepare();
  };
  const handle = (work) => work().catch((err) => fail(err.message || String(err)));

  current.onvalidatemerchant = (event) => handle(async () => {
    const answer = await rpc('startMerchantSession', {
      validationURL: event.validationURL,
      domain: location.hostname,
    });
    if (answer.status === 'success') {
      current.completeMerchantValidation(answer.merchantSession);
    } else {
      fail(answer.message || `Apple Pay could not start (${answer.code || 'merchant validation failed'}).`);
    }
  });

  current.onshippingcontactselected = (event) => handle(async () => {
    state.shippingContact = event.shippingContact;
    const result = await rpc('selectShippingContact', sheetParams({ shippingContact: event.shippingContact }));
    state.shippingMethod = result.shippingMethod || state.shippingMethod;
    current.completeShippingContactSelection(toUpdate(result));
  });

  current.onshippingmethodselected = (event) => handle(async () => {
    state.shippingMethod = event.shippingMethod.identifier;
    const result = await rpc('selectShippingMethod', sheetParams({ shippingMethod: state.shippingMethod }));
    current.completeShippingMethodSelection(toUpdate(result));
  });

  current.onpaymentmethodselected = (event) => handle(async () => {
    state.paymentMethod = cardOf(event.paymentMethod);
    const params = sheetParams({});
    if (!params.paymentMethod) {
      // Not a card payservice can price (no network or type): price without a card adjustment.
      const result = await rpc('computeSummaryItems', params);
      current.completePaymentMethodSelection(toUpdate(result));
      return;
    }
    const result = await rpc('selectPaymentMethod', params);
    current.completePaymentMethodSelection(toUpdate(result));
  });

  current.oncouponcodechanged = (event) => handle(async () => {
    state.couponCode = event.couponCode || '';
    const result = await rpc('changeCouponCode', sheetParams({ couponCode: state.couponCode }));
    state.shippingMethod = result.shippingMethod || state.shippingMethod;
    current.completeCouponCodeChange(toUpdate(result));
  });

  current.onpaymentauthorized = (event) => handle(async () => {
    const payment = event.payment; // ApplePayPayment: token, shippingContact, billingContact
    state.shippingContact = payment.shippingContact || state.shippingContact;
    const shippingMethod = state.shippingMethod || (initialShippingMethod && initialShippingMethod.identifier);
    const params = {
      items: state.items,
      shippingMethod,
      payment: { token: payment.token },
    };
    if (payment.shippingContact) params.payment.shippingContact = payment.shippingContact;
    if (payment.billingContact) params.payment.billingContact = payment.billingContact;
    if (state.couponCode) params.couponCode = state.couponCode;
    if (paymentRequest.applicationData) params.applicationData = paymentRequest.applicationData;

    const authorization = await rpc('authorizePayment', params);
    if (authorization.status !== 'success') {
      // The sheet shows the errors and stays open: the buyer may fix them and pay again.
      current.completePayment({
        status: ApplePaySession.STATUS_FAILURE,
        errors: (authorization.errors || []).map(toApplePayError),
      });
      const first = (authorization.errors || [])[0];
      showMessage(first ? first.message : 'The payment was not authorized.', 'error');
      return;
    }

    // Charge it: the same items, shipping method, contacts and coupon the token is bound to.
    const order = {
      chargeToken: authorization.chargeToken,
      items: state.items,
      shippingMethod,
      shippingContact: payment.shippingContact || {},
      amount: authorization.amount,
      currencyCode: authorization.currencyCode,
    };
    if (payment.billingContact) order.billingContact = payment.billingContact;
    if (state.couponCode) order.couponCode = state.couponCode;

    const result = await processOrder(order);
    if (result.status === 'succeeded') {
      ended = true;
      const completion = { status: ApplePaySession.STATUS_SUCCESS };
      // authorizePayment's, present when the merchant configures Wallet order tracking.
      if (authorization.orderDetails) completion.orderDetails = authorization.orderDetails;
      current.completePayment(completion);
      showMessage(`Thank you! Your order ${result.orderId} is placed (${result.amount} ${result.currencyCode}).`, 'success');
      resetCheckout();
    } else {
      current.completePayment({
        status: ApplePaySession.STATUS_FAILURE,
        errors: [new ApplePayError('unknown', undefined, result.message || 'The payment failed.')],
      });
      showMessage(result.message || 'The payment failed.', 'error');
    }
  });

  current.oncancel = () => {
    // Keeps a failure's message (a refused authorization or charge) visible.
    if (!ended && $message.className !== 'error') showMessage('Payment cancelled.');
    ended = true;
    resetCheckout();
    prepare();
  };

  current.begin();
}

// ---- start

renderProducts();
$coupon.addEventListener('input', cartChanged);
$pay.addEventListener('click', startCheckout);
checkApplePay();
prepare();

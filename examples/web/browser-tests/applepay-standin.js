/*
 * Apple Pay JS stand-in for headless Chromium (the browser tests of examples/web).
 *
 * Injected with Page.addScriptToEvaluateOnNewDocument right after `window.__applePayConfig = {...};`,
 * so it runs before the page. It models what Safari's ApplePaySession does for a page, the payment
 * sheet (driven by the test suite through window.__applePay), and it CHECKS the page's use of the API:
 * everything WebKit would throw is thrown with WebKit's exception type and message, and everything
 * WebKit lets pass silently but is still wrong (a member the dictionary does not have at the session's
 * version, a string where a Date is due, a non-string amount, ...) is recorded in __applePay.violations().
 *
 * Config (window.__applePayConfig): available (true; false = no ApplePaySession/ApplePayError at all),
 * maxVersion (14), canMakePayments (true), validationURL, timeoutMs (30000: the sheet's timeout for every
 * event awaiting completion), dictionaries (else the built-in tables below, = applepayjs-dictionaries.json),
 * openPaymentSetup (false: what openPaymentSetup resolves to).
 *
 * What it models, and where each rule comes from:
 * - ApplePaySession interface, constants, static methods, overloads (update-object forms and the old
 *   positional forms), on... handlers: WebKit Source/WebCore/Modules/applepay/ApplePaySession.idl;
 *   https://developer.apple.com/documentation/applepayontheweb/applepaysession
 * - Constructor: PaymentSession::canCreateSession ("Trying to start an Apple Pay session from an insecure
 *   document."), then the user gesture ("Must create a new ApplePaySession from a user gesture handler.";
 *   Chromium's navigator.userActivation.isActive stands in for UserGestureIndicator), then the version
 *   (ApplePayRequestBase.cpp: InvalidAccessError '"N" is not a supported version.'), then the request
 *   (ApplePaySession.cpp convertAndValidate, ApplePayRequestBase.cpp, IDL dictionary conversion).
 *   NOTE: WebKit does not refuse a second *construction*; the one-sheet-per-page rule is in begin().
 * - begin(): "Payment session is already active." (not Idle), "Page already has an active payment
 *   session." (another session has begun and not ended) - ApplePaySession::begin.
 * - abort(): InvalidAccessError unless begun and not final (canAbort); no oncancel.
 * - completeX(): InvalidAccessError (no message; the DOMException default text) unless X's event awaits
 *   completion (canCompleteMerchantValidation / ...ShippingMethodSelection / ...ShippingContactSelection /
 *   ...PaymentMethodSelection / ...CouponCodeChange / canCompletePayment); completeMerchantValidation
 *   needs an object (TypeError). Invalid completePayment status: InvalidAccessError.
 * - completePayment final or not: WebKit isFinalStateResult (PaymentRequest.cpp / PaymentAuthorizationStatus):
 *   SUCCESS is final; FAILURE is final when it has no errors or an error with code "unknown", otherwise
 *   the sheet stays open; PIN_* statuses are not final; statuses 2/3/4 become FAILURE plus an error
 *   (convertAndValidate(ApplePayPaymentAuthorizationResult)).
 * - Old positional completeShippingMethodSelection with a status other than SUCCESS cancels the sheet
 *   (oncancel); positional forms at version >= 3 are recorded as violations (RN-3: version 3 takes the
 *   update objects).
 * - Events with no listener: shippingmethodselected, shippingcontactselected, paymentmethodselected and
 *   couponcodechanged are completed by the sheet itself, without an event (didSelect... hasEventListeners).
 * - Amounts: `"x" is not a valid amount.` (TypeError); total: "Missing total label.", "Total amount must not
 *   be negative." (PaymentRequestValidator - wording from memory of WebKit, not re-read); networks:
 *   '"x" is not a valid payment network.', "At least one supported network must be provided."
 *   (ApplePayRequestBase.cpp); recurring/automatic reload/deferred billing and URLs: the messages of
 *   ApplePaySession.cpp convertAndValidate (2025).
 * - IDL binding errors (missing `required` member, bad enum value, not a sequence, not an ApplePayError)
 *   are TypeErrors; their wording imitates WebKit's generated bindings (approximate).
 * - Dictionaries by version: applepayjs-dictionaries.json (from Tests/PayServiceTestSupport/ApplePayJSSchema.swift
 *   and docs/applepayjs-versions.md; update dictionaries from Apple's declarations at
 *   https://developer.apple.com/documentation/applepayontheweb/applepayshippingmethodupdate (and
 *   .../applepayshippingcontactupdate, .../applepaypaymentmethodupdate, .../applepaycouponcodeupdate,
 *   .../applepaypaymentauthorizationresult), WebKit's *Update.idl and DefinitelyTyped @types/applepayjs 14).
 * - ApplePayError(code, contactField, message): WebKit ApplePayError.idl, ApplePayErrorCode.idl (enum
 *   conversion TypeError; contactField optional, null is not a value).
 * - Timeout: a completion not made within timeoutMs ends the sheet with oncancel (Apple: the sheet times
 *   out after 30 s; https://developer.apple.com/documentation/applepayontheweb/applepaysession/oncancel).
 * - Event contents: ApplePayValidateMerchantEvent.validationURL, ApplePayShippingContactSelectedEvent
 *   .shippingContact (redacted: locality, subLocality, administrativeArea, subAdministrativeArea,
 *   postalCode, countryCode, country - Apple docs onshippingcontactselected), ...ShippingMethodSelectedEvent
 *   .shippingMethod, ...PaymentMethodSelectedEvent.paymentMethod, ApplePayCouponCodeChangedEvent.couponCode,
 *   ApplePayPaymentAuthorizedEvent.payment (token {paymentData, paymentMethod, transactionIdentifier},
 *   shippingContact, billingContact).
 *
 * Control API for the suite: window.__applePay.{state, pending, sheet, log, violations, sessions,
 * selectShippingContact, selectShippingMethod, selectPaymentMethod, changeCouponCode, authorize, cancel}.
 */
(function () {
  'use strict';

  var config = window.__applePayConfig || {};
  var AVAILABLE = config.available !== false;
  var MAX_VERSION = typeof config.maxVersion === 'number' ? config.maxVersion : 14;
  var CAN_MAKE_PAYMENTS = config.canMakePayments !== false;
  var VALIDATION_URL = typeof config.validationURL === 'string' ? config.validationURL
    : 'https://apple-pay-gateway.apple.com/paymentservices/startSession';
  var TIMEOUT_MS = typeof config.timeoutMs === 'number' ? config.timeoutMs : 30000;

  // BEGIN DICTIONARIES (generated from applepayjs-dictionaries.json; test_standin.py checks they are equal)
  var BUILTIN_DICTIONARIES = {"_source":"Apple Pay JS dictionaries by introducing version (3...14; since 1 or 2 = allowed from 3). Members of ApplePayPaymentRequest and its nested dictionaries and the enumeration values are transcribed from the `members` and `values` tables of Tests/PayServiceTestSupport/ApplePayJSSchema.swift (research: docs/applepayjs-versions.md); test_standin.py checks they still agree. `idl` is the Apple Pay JS (WebIDL) type from Apple's declarations; `idlRequired` marks members WebKit's IDL declares `required` (missing = TypeError), `required` alone is Apple's documentation. The update dictionaries, ApplePayPaymentAuthorizationResult, ApplePayPaymentOrderDetails, ApplePayErrorCode, ApplePayErrorContactField and ApplePayPaymentMethodType rows were added by hand; each carries its `source`.","members":[{"type":"ApplePayPaymentRequest","name":"countryCode","since":1,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayPaymentRequest","name":"currencyCode","since":1,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayPaymentRequest","name":"merchantCapabilities","since":1,"idl":"sequence<enum:ApplePayMerchantCapability>","required":true,"idlRequired":true},{"type":"ApplePayPaymentRequest","name":"supportedNetworks","since":1,"idl":"sequence<enum:ApplePayPaymentNetwork>","required":true,"idlRequired":true},{"type":"ApplePayPaymentRequest","name":"total","since":1,"idl":"ApplePayLineItem","required":true,"idlRequired":true},{"type":"ApplePayPaymentRequest","name":"lineItems","since":1,"idl":"sequence<ApplePayLineItem>"},{"type":"ApplePayPaymentRequest","name":"requiredBillingContactFields","since":1,"idl":"sequence<enum:ApplePayContactField>"},{"type":"ApplePayPaymentRequest","name":"billingContact","since":1,"idl":"ApplePayPaymentContact"},{"type":"ApplePayPaymentRequest","name":"requiredShippingContactFields","since":1,"idl":"sequence<enum:ApplePayContactField>"},{"type":"ApplePayPaymentRequest","name":"shippingContact","since":1,"idl":"ApplePayPaymentContact"},{"type":"ApplePayPaymentRequest","name":"shippingType","since":1,"idl":"enum:ApplePayShippingType"},{"type":"ApplePayPaymentRequest","name":"shippingMethods","since":1,"idl":"sequence<ApplePayShippingMethod>"},{"type":"ApplePayPaymentRequest","name":"applicationData","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentRequest","name":"supportedCountries","since":3,"idl":"sequence<DOMString>"},{"type":"ApplePayPaymentRequest","name":"supportsCouponCode","since":12,"idl":"boolean"},{"type":"ApplePayPaymentRequest","name":"couponCode","since":12,"idl":"DOMString"},{"type":"ApplePayPaymentRequest","name":"shippingContactEditingMode","since":12,"idl":"enum:ApplePayShippingContactEditingMode"},{"type":"ApplePayPaymentRequest","name":"recurringPaymentRequest","since":14,"idl":"ApplePayRecurringPaymentRequest"},{"type":"ApplePayPaymentRequest","name":"automaticReloadPaymentRequest","since":14,"idl":"ApplePayAutomaticReloadPaymentRequest"},{"type":"ApplePayPaymentRequest","name":"multiTokenContexts","since":14,"idl":"sequence<ApplePayPaymentTokenContext>"},{"type":"ApplePayPaymentRequest","name":"deferredPaymentRequest","since":14,"idl":"ApplePayDeferredPaymentRequest"},{"type":"ApplePayLineItem","name":"label","since":1,"idl":"DOMString","required":true},{"type":"ApplePayLineItem","name":"amount","since":1,"idl":"decimal","required":true},{"type":"ApplePayLineItem","name":"type","since":1,"idl":"enum:ApplePayLineItemType"},{"type":"ApplePayLineItem","name":"paymentTiming","since":14,"idl":"enum:ApplePayPaymentTiming"},{"type":"ApplePayLineItem","name":"recurringPaymentStartDate","since":14,"idl":"Date"},{"type":"ApplePayLineItem","name":"recurringPaymentIntervalUnit","since":14,"idl":"enum:ApplePayRecurringPaymentDateUnit"},{"type":"ApplePayLineItem","name":"recurringPaymentIntervalCount","since":14,"idl":"long"},{"type":"ApplePayLineItem","name":"recurringPaymentEndDate","since":14,"idl":"Date"},{"type":"ApplePayLineItem","name":"deferredPaymentDate","since":14,"idl":"Date"},{"type":"ApplePayLineItem","name":"automaticReloadPaymentThresholdAmount","since":14,"idl":"decimal"},{"type":"ApplePayShippingMethod","name":"label","since":1,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayShippingMethod","name":"detail","since":1,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayShippingMethod","name":"amount","since":1,"idl":"decimal","required":true,"idlRequired":true},{"type":"ApplePayShippingMethod","name":"identifier","since":1,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayShippingMethod","name":"dateComponentsRange","since":12,"idl":"ApplePayDateComponentsRange"},{"type":"ApplePayDateComponentsRange","name":"startDateComponents","since":12,"idl":"ApplePayDateComponents","required":true,"idlRequired":true},{"type":"ApplePayDateComponentsRange","name":"endDateComponents","since":12,"idl":"ApplePayDateComponents","required":true,"idlRequired":true},{"type":"ApplePayDateComponents","name":"years","since":12,"idl":"long"},{"type":"ApplePayDateComponents","name":"months","since":12,"idl":"long"},{"type":"ApplePayDateComponents","name":"days","since":12,"idl":"long"},{"type":"ApplePayDateComponents","name":"hours","since":12,"idl":"long"},{"type":"ApplePayPaymentContact","name":"emailAddress","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"phoneNumber","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"givenName","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"familyName","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"phoneticGivenName","since":3,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"phoneticFamilyName","since":3,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"addressLines","since":1,"idl":"sequence<DOMString>"},{"type":"ApplePayPaymentContact","name":"subLocality","since":3,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"locality","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"postalCode","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"subAdministrativeArea","since":3,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"administrativeArea","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"country","since":1,"idl":"DOMString"},{"type":"ApplePayPaymentContact","name":"countryCode","since":1,"idl":"DOMString"},{"type":"ApplePayRecurringPaymentRequest","name":"paymentDescription","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayRecurringPaymentRequest","name":"regularBilling","since":14,"idl":"ApplePayLineItem","required":true,"idlRequired":true},{"type":"ApplePayRecurringPaymentRequest","name":"trialBilling","since":14,"idl":"ApplePayLineItem"},{"type":"ApplePayRecurringPaymentRequest","name":"billingAgreement","since":14,"idl":"DOMString"},{"type":"ApplePayRecurringPaymentRequest","name":"managementURL","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayRecurringPaymentRequest","name":"tokenNotificationURL","since":14,"idl":"DOMString"},{"type":"ApplePayAutomaticReloadPaymentRequest","name":"paymentDescription","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayAutomaticReloadPaymentRequest","name":"automaticReloadBilling","since":14,"idl":"ApplePayLineItem","required":true,"idlRequired":true},{"type":"ApplePayAutomaticReloadPaymentRequest","name":"billingAgreement","since":14,"idl":"DOMString"},{"type":"ApplePayAutomaticReloadPaymentRequest","name":"managementURL","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayAutomaticReloadPaymentRequest","name":"tokenNotificationURL","since":14,"idl":"DOMString"},{"type":"ApplePayDeferredPaymentRequest","name":"paymentDescription","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayDeferredPaymentRequest","name":"deferredBilling","since":14,"idl":"ApplePayLineItem","required":true,"idlRequired":true},{"type":"ApplePayDeferredPaymentRequest","name":"billingAgreement","since":14,"idl":"DOMString"},{"type":"ApplePayDeferredPaymentRequest","name":"managementURL","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayDeferredPaymentRequest","name":"tokenNotificationURL","since":14,"idl":"DOMString"},{"type":"ApplePayDeferredPaymentRequest","name":"freeCancellationDate","since":14,"idl":"Date"},{"type":"ApplePayDeferredPaymentRequest","name":"freeCancellationDateTimeZone","since":14,"idl":"DOMString"},{"type":"ApplePayPaymentTokenContext","name":"merchantIdentifier","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayPaymentTokenContext","name":"externalIdentifier","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayPaymentTokenContext","name":"merchantName","since":14,"idl":"DOMString","required":true,"idlRequired":true},{"type":"ApplePayPaymentTokenContext","name":"merchantDomain","since":14,"idl":"DOMString"},{"type":"ApplePayPaymentTokenContext","name":"amount","since":14,"idl":"decimal","required":true,"idlRequired":true},{"type":"ApplePayShippingContactUpdate","name":"newTotal","since":3,"idl":"ApplePayLineItem","required":true,"idlRequired":true,"source":"RN-3 (update objects), WebKit ApplePayShippingContactUpdate.idl / ApplePayDetailsUpdateBase.idl `required`"},{"type":"ApplePayShippingContactUpdate","name":"newLineItems","since":3,"idl":"sequence<ApplePayLineItem>","source":"RN-3, WebKit IDL"},{"type":"ApplePayShippingContactUpdate","name":"newRecurringPaymentRequest","since":14,"idl":"ApplePayRecurringPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayShippingContactUpdate","name":"newAutomaticReloadPaymentRequest","since":14,"idl":"ApplePayAutomaticReloadPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayShippingContactUpdate","name":"newMultiTokenContexts","since":14,"idl":"sequence<ApplePayPaymentTokenContext>","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayShippingContactUpdate","name":"newDeferredPaymentRequest","since":14,"idl":"ApplePayDeferredPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14) (silent, as deferredPaymentRequest: 14)"},{"type":"ApplePayShippingContactUpdate","name":"errors","since":3,"idl":"sequence<ApplePayError>","source":"RN-3, WebKit ApplePayShippingContactUpdate.idl"},{"type":"ApplePayShippingContactUpdate","name":"newShippingMethods","since":3,"idl":"sequence<ApplePayShippingMethod>","source":"RN-3, WebKit ApplePayShippingContactUpdate.idl"},{"type":"ApplePayShippingMethodUpdate","name":"newTotal","since":3,"idl":"ApplePayLineItem","required":true,"idlRequired":true,"source":"RN-3 (update objects), WebKit ApplePayShippingMethodUpdate.idl / ApplePayDetailsUpdateBase.idl `required`"},{"type":"ApplePayShippingMethodUpdate","name":"newLineItems","since":3,"idl":"sequence<ApplePayLineItem>","source":"RN-3, WebKit IDL"},{"type":"ApplePayShippingMethodUpdate","name":"newRecurringPaymentRequest","since":14,"idl":"ApplePayRecurringPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayShippingMethodUpdate","name":"newAutomaticReloadPaymentRequest","since":14,"idl":"ApplePayAutomaticReloadPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayShippingMethodUpdate","name":"newMultiTokenContexts","since":14,"idl":"sequence<ApplePayPaymentTokenContext>","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayShippingMethodUpdate","name":"newDeferredPaymentRequest","since":14,"idl":"ApplePayDeferredPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14) (silent, as deferredPaymentRequest: 14)"},{"type":"ApplePayShippingMethodUpdate","name":"newShippingMethods","since":14,"idl":"sequence<ApplePayShippingMethod>","source":"Apple docs applepayshippingmethodupdate (no version), DT 14; not in WebKit ApplePayShippingMethodUpdate.idl 2017: silent, so 14. No `errors` member anywhere"},{"type":"ApplePayPaymentMethodUpdate","name":"newTotal","since":3,"idl":"ApplePayLineItem","required":true,"idlRequired":true,"source":"RN-3 (update objects), WebKit ApplePayPaymentMethodUpdate.idl / ApplePayDetailsUpdateBase.idl `required`"},{"type":"ApplePayPaymentMethodUpdate","name":"newLineItems","since":3,"idl":"sequence<ApplePayLineItem>","source":"RN-3, WebKit IDL"},{"type":"ApplePayPaymentMethodUpdate","name":"newRecurringPaymentRequest","since":14,"idl":"ApplePayRecurringPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayPaymentMethodUpdate","name":"newAutomaticReloadPaymentRequest","since":14,"idl":"ApplePayAutomaticReloadPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayPaymentMethodUpdate","name":"newMultiTokenContexts","since":14,"idl":"sequence<ApplePayPaymentTokenContext>","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayPaymentMethodUpdate","name":"newDeferredPaymentRequest","since":14,"idl":"ApplePayDeferredPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14) (silent, as deferredPaymentRequest: 14)"},{"type":"ApplePayPaymentMethodUpdate","name":"errors","since":14,"idl":"sequence<ApplePayError>","source":"Apple docs applepaypaymentmethodupdate (no version), DT 14; not in WebKit IDL 2017: silent, so 14"},{"type":"ApplePayPaymentMethodUpdate","name":"newShippingMethods","since":14,"idl":"sequence<ApplePayShippingMethod>","source":"as errors"},{"type":"ApplePayCouponCodeUpdate","name":"newTotal","since":12,"idl":"ApplePayLineItem","required":true,"idlRequired":true,"source":"RN-3 (update objects), WebKit ApplePayCouponCodeUpdate.idl / ApplePayDetailsUpdateBase.idl `required`"},{"type":"ApplePayCouponCodeUpdate","name":"newLineItems","since":12,"idl":"sequence<ApplePayLineItem>","source":"RN-3, WebKit IDL"},{"type":"ApplePayCouponCodeUpdate","name":"newRecurringPaymentRequest","since":14,"idl":"ApplePayRecurringPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayCouponCodeUpdate","name":"newAutomaticReloadPaymentRequest","since":14,"idl":"ApplePayAutomaticReloadPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayCouponCodeUpdate","name":"newMultiTokenContexts","since":14,"idl":"sequence<ApplePayPaymentTokenContext>","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14)"},{"type":"ApplePayCouponCodeUpdate","name":"newDeferredPaymentRequest","since":14,"idl":"ApplePayDeferredPaymentRequest","source":"WebKit ApplePayDetailsUpdateBase.idl; Apple docs (same members as the request's, RN-14) (silent, as deferredPaymentRequest: 14)"},{"type":"ApplePayCouponCodeUpdate","name":"errors","since":12,"idl":"sequence<ApplePayError>","source":"RN-12 (coupon codes), WebKit ApplePayCouponCodeUpdate.idl"},{"type":"ApplePayCouponCodeUpdate","name":"newShippingMethods","since":12,"idl":"sequence<ApplePayShippingMethod>","source":"RN-12, WebKit ApplePayCouponCodeUpdate.idl"},{"type":"ApplePayPaymentAuthorizationResult","name":"status","since":3,"idl":"unsigned short","required":true,"idlRequired":true,"source":"RN-3, WebKit ApplePayPaymentAuthorizationResult.idl `required`"},{"type":"ApplePayPaymentAuthorizationResult","name":"errors","since":3,"idl":"sequence<ApplePayError>","source":"RN-3, WebKit ApplePayPaymentAuthorizationResult.idl"},{"type":"ApplePayPaymentAuthorizationResult","name":"orderDetails","since":14,"idl":"ApplePayPaymentOrderDetails","source":"docs/applepayjs-versions.md (silent; PKPaymentOrderDetails iOS 16 = 14)"},{"type":"ApplePayPaymentOrderDetails","name":"orderTypeIdentifier","since":14,"idl":"DOMString","required":true,"idlRequired":true,"source":"Apple docs applepaypaymentorderdetails; docs/applepayjs-versions.md"},{"type":"ApplePayPaymentOrderDetails","name":"orderIdentifier","since":14,"idl":"DOMString","required":true,"idlRequired":true,"source":"Apple docs applepaypaymentorderdetails; docs/applepayjs-versions.md"},{"type":"ApplePayPaymentOrderDetails","name":"webServiceURL","since":14,"idl":"DOMString","required":true,"idlRequired":true,"source":"Apple docs applepaypaymentorderdetails; docs/applepayjs-versions.md"},{"type":"ApplePayPaymentOrderDetails","name":"authenticationToken","since":14,"idl":"DOMString","required":true,"idlRequired":true,"source":"Apple docs applepaypaymentorderdetails; docs/applepayjs-versions.md"}],"values":[{"type":"ApplePayMerchantCapability","value":"supports3DS","since":1},{"type":"ApplePayMerchantCapability","value":"supportsEMV","since":1},{"type":"ApplePayMerchantCapability","value":"supportsCredit","since":1},{"type":"ApplePayMerchantCapability","value":"supportsDebit","since":1},{"type":"ApplePayContactField","value":"email","since":1},{"type":"ApplePayContactField","value":"name","since":1},{"type":"ApplePayContactField","value":"phone","since":1},{"type":"ApplePayContactField","value":"postalAddress","since":1},{"type":"ApplePayContactField","value":"phoneticName","since":3},{"type":"ApplePayShippingType","value":"shipping","since":1},{"type":"ApplePayShippingType","value":"delivery","since":1},{"type":"ApplePayShippingType","value":"storePickup","since":1},{"type":"ApplePayShippingType","value":"servicePickup","since":1},{"type":"ApplePayShippingContactEditingMode","value":"available","since":12},{"type":"ApplePayShippingContactEditingMode","value":"enabled","since":12},{"type":"ApplePayShippingContactEditingMode","value":"storePickup","since":12},{"type":"ApplePayLineItemType","value":"final","since":1},{"type":"ApplePayLineItemType","value":"pending","since":1},{"type":"ApplePayPaymentTiming","value":"immediate","since":14},{"type":"ApplePayPaymentTiming","value":"recurring","since":14},{"type":"ApplePayPaymentTiming","value":"deferred","since":14},{"type":"ApplePayPaymentTiming","value":"automaticReload","since":14},{"type":"ApplePayRecurringPaymentDateUnit","value":"year","since":14},{"type":"ApplePayRecurringPaymentDateUnit","value":"month","since":14},{"type":"ApplePayRecurringPaymentDateUnit","value":"day","since":14},{"type":"ApplePayRecurringPaymentDateUnit","value":"hour","since":14},{"type":"ApplePayRecurringPaymentDateUnit","value":"minute","since":14},{"type":"ApplePayPaymentNetwork","value":"amex","since":1},{"type":"ApplePayPaymentNetwork","value":"chinaUnionPay","since":1},{"type":"ApplePayPaymentNetwork","value":"discover","since":1},{"type":"ApplePayPaymentNetwork","value":"interac","since":1},{"type":"ApplePayPaymentNetwork","value":"masterCard","since":1},{"type":"ApplePayPaymentNetwork","value":"privateLabel","since":1},{"type":"ApplePayPaymentNetwork","value":"visa","since":1},{"type":"ApplePayPaymentNetwork","value":"jcb","since":2},{"type":"ApplePayPaymentNetwork","value":"cartesBancaires","since":4},{"type":"ApplePayPaymentNetwork","value":"eftpos","since":4},{"type":"ApplePayPaymentNetwork","value":"electron","since":4},{"type":"ApplePayPaymentNetwork","value":"maestro","since":4},{"type":"ApplePayPaymentNetwork","value":"vPay","since":4},{"type":"ApplePayPaymentNetwork","value":"elo","since":5},{"type":"ApplePayPaymentNetwork","value":"mada","since":5},{"type":"ApplePayPaymentNetwork","value":"mir","since":11},{"type":"ApplePayPaymentNetwork","value":"girocard","since":11},{"type":"ApplePayPaymentNetwork","value":"dankort","since":13},{"type":"ApplePayPaymentNetwork","value":"bancomat","since":14},{"type":"ApplePayPaymentNetwork","value":"bancontact","since":14},{"type":"ApplePayPaymentNetwork","value":"bankAxept","since":15},{"type":"ApplePayErrorCode","value":"unknown","since":3,"source":"RN-3, WebKit ApplePayErrorCode.idl"},{"type":"ApplePayErrorCode","value":"shippingContactInvalid","since":3,"source":"RN-3, WebKit ApplePayErrorCode.idl"},{"type":"ApplePayErrorCode","value":"billingContactInvalid","since":3,"source":"RN-3, WebKit ApplePayErrorCode.idl"},{"type":"ApplePayErrorCode","value":"addressUnserviceable","since":3,"source":"RN-3, WebKit ApplePayErrorCode.idl"},{"type":"ApplePayErrorCode","value":"couponCodeInvalid","since":12,"source":"RN-12, WebKit ApplePayErrorCode.idl"},{"type":"ApplePayErrorCode","value":"couponCodeExpired","since":12,"source":"RN-12, WebKit ApplePayErrorCode.idl"},{"type":"ApplePayErrorContactField","value":"phoneNumber","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"emailAddress","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"name","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"postalAddress","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"addressLines","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"locality","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"postalCode","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"administrativeArea","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"country","since":3,"source":"WebKit ApplePayError.idl (2017)"},{"type":"ApplePayErrorContactField","value":"phoneticName","since":3,"source":"Apple docs ApplePayErrorContactField, DT 14 (version silent)"},{"type":"ApplePayErrorContactField","value":"subLocality","since":3,"source":"Apple docs ApplePayErrorContactField, DT 14 (version silent)"},{"type":"ApplePayErrorContactField","value":"subAdministrativeArea","since":3,"source":"Apple docs ApplePayErrorContactField, DT 14 (version silent)"},{"type":"ApplePayErrorContactField","value":"countryCode","since":3,"source":"Apple docs ApplePayErrorContactField, DT 14 (version silent)"},{"type":"ApplePayPaymentMethodType","value":"debit","since":1,"source":"Apple docs ApplePayPaymentMethodType, DT 14"},{"type":"ApplePayPaymentMethodType","value":"credit","since":1,"source":"Apple docs ApplePayPaymentMethodType, DT 14"},{"type":"ApplePayPaymentMethodType","value":"prepaid","since":1,"source":"Apple docs ApplePayPaymentMethodType, DT 14"},{"type":"ApplePayPaymentMethodType","value":"store","since":1,"source":"Apple docs ApplePayPaymentMethodType, DT 14"}]};
  // END DICTIONARIES
  var DICTS = config.dictionaries || BUILTIN_DICTIONARIES;

  var AMOUNT = /^-?[0-9]+(\.[0-9]+)?$/;
  var DEFAULT_INVALID_ACCESS = 'The object does not support the operation or argument.';
  var EVENT_TYPES = ['validatemerchant', 'paymentmethodselected', 'paymentauthorized', 'shippingmethodselected',
    'shippingcontactselected', 'couponcodechanged', 'cancel'];
  var REDACTED_CONTACT_FIELDS = ['locality', 'subLocality', 'administrativeArea', 'subAdministrativeArea',
    'postalCode', 'countryCode', 'country'];

  // ---------------------------------------------------------------- tables
  var membersOf = {};   // type -> {name: row}
  var valuesOf = {};    // enum -> {value: since}
  (DICTS.members || []).forEach(function (row) {
    (membersOf[row.type] = membersOf[row.type] || {})[row.name] = row;
  });
  (DICTS.values || []).forEach(function (row) {
    (valuesOf[row.type] = valuesOf[row.type] || {})[row.value] = row.since;
  });

  // ---------------------------------------------------------------- recording
  var pageStart = performance.now();
  var logEntries = [];
  var violationList = [];
  var constructed = 0;
  var latest = null;      // internal record of the latest constructed session
  var activeRecord = null; // the session that holds the page's one sheet (begun, not final)
  var priv = new WeakMap();

  function jsonSafe(value, seen) {
    seen = seen || [];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'number' && !isFinite(value)) return null;
      if (typeof value === 'bigint') return String(value);
      return value;
    }
    if (value instanceof Date) return isNaN(value.getTime()) ? null : value.toISOString();
    if (seen.indexOf(value) >= 0) return '[circular]';
    seen = seen.concat([value]);
    if (ApplePayErrorImpl && value instanceof ApplePayErrorImpl) {
      return { code: value.code, contactField: value.contactField === null ? undefined : value.contactField, message: value.message };
    }
    if (Array.isArray(value)) return value.map(function (v) { var j = jsonSafe(v, seen); return j === undefined ? null : j; });
    var out = {};
    Object.keys(value).forEach(function (k) { var j = jsonSafe(value[k], seen); if (j !== undefined) out[k] = j; });
    return out;
  }

  function record(rec, kind, name, detail) {
    var t0 = rec ? rec.t0 : pageStart;
    logEntries.push({ t: Math.round((performance.now() - t0) * 10) / 10, session: rec ? rec.index : 0,
      kind: kind, name: name, detail: jsonSafe(detail === undefined ? null : detail) });
  }
  function violation(rec, text) {
    violationList.push((rec ? 'session ' + rec.index + ': ' : '') + text);
  }
  // Every exception the stand-in throws to the page goes through here: it is logged and a violation.
  function thrown(rec, where, error) {
    violation(rec, where + ' threw ' + error.name + ': ' + error.message);
    record(rec, 'error', where, { name: error.name, message: error.message });
    return error;
  }
  function invalidAccess(message) { return new DOMException(message || DEFAULT_INVALID_ACCESS, 'InvalidAccessError'); }

  // ---------------------------------------------------------------- dictionary checking
  // check() converts `value` as WebKit's IDL conversion would for the member type `idl`, throwing
  // WebKit's TypeErrors, and records as violations what WebKit lets through silently. It returns the
  // converted value (unknown or too-new members dropped, as the sheet of that version would not use them).
  function Checker(rec, version, where) {
    this.rec = rec; this.version = version; this.where = where; this.flags = [];
  }
  Checker.prototype.flag = function (path, text) { this.flags.push(path + ': ' + text); };
  Checker.prototype.fail = function (message) { throw new TypeError(message); };
  Checker.prototype.check = function (value, idl, path) {
    var m;
    if ((m = /^sequence<(.*)>$/.exec(idl))) {
      if (value === null || typeof value !== 'object' || typeof value[Symbol.iterator] !== 'function') {
        this.fail('Value is not a sequence');
      }
      var self = this;
      return Array.from(value).map(function (v, i) { return self.check(v, m[1], path + '[' + i + ']'); });
    }
    if ((m = /^enum:(.*)$/.exec(idl))) {
      var s = String(value);
      var known = valuesOf[m[1]] || {};
      if (!Object.prototype.hasOwnProperty.call(known, s)) {
        if (m[1] === 'ApplePayPaymentNetwork') this.fail('"' + s + '" is not a valid payment network.');
        this.fail('Type error: ' + path + ' "' + s + '" is not a valid value for enumeration ' + m[1] + '.');
      }
      if (known[s] > Math.max(this.version, 3)) {
        // WebKit gates networks by version (validatedPaymentNetwork); other values are only flagged.
        if (m[1] === 'ApplePayPaymentNetwork') this.fail('"' + s + '" is not a valid payment network.');
        this.flag(path, '"' + s + '" is not a value of ' + m[1] + ' at version ' + this.version + ' (since ' + known[s] + ')');
      }
      if (typeof value !== 'string') this.flag(path, 'not a string (' + typeof value + ')');
      return s;
    }
    switch (idl) {
      case 'DOMString':
      case 'decimal':
        if (typeof value !== 'string') this.flag(path, 'a ' + (value === null ? 'null' : typeof value) + ' where a string is due (converted to "' + String(value) + '")');
        var str = String(value);
        if (idl === 'decimal' && !AMOUNT.test(str)) this.flag(path, '"' + str + '" is not a decimal amount');
        return str;
      case 'boolean':
        if (typeof value !== 'boolean') this.flag(path, 'a ' + typeof value + ' where a boolean is due');
        return Boolean(value);
      case 'long':
      case 'unsigned short':
        if (typeof value !== 'number' || !Number.isInteger(value)) this.flag(path, 'not an integer (' + JSON.stringify(jsonSafe(value)) + ')');
        return Number(value);
      case 'Date':
        if (!(value instanceof Date)) {
          this.flag(path, 'a ' + (value === null ? 'null' : typeof value) + ' where a Date is due');
          return new Date(NaN);
        }
        if (isNaN(value.getTime())) this.flag(path, 'an invalid Date');
        return value;
      case 'ApplePayError':
        if (!(value instanceof ApplePayErrorImpl)) this.fail('Type error: ' + path + ' is not an ApplePayError');
        return value;
    }
    return this.dictionary(value, idl, path);
  };
  Checker.prototype.dictionary = function (value, type, path) {
    var table = membersOf[type];
    if (!table) { this.flag(path, 'no table for ' + type); return value; }
    if (value === undefined || value === null) value = {};
    if (typeof value !== 'object') this.fail('Type error: ' + path + ' is not an object (' + type + ')');
    var out = {};
    var self = this;
    var names = [];
    for (var k in value) names.push(k);  // own and inherited enumerable keys, as IDL dictionaries read them
    names.forEach(function (name) {
      if (!Object.prototype.hasOwnProperty.call(table, name)) {
        if (value[name] !== undefined) self.flag(path + '.' + name, 'not a member of ' + type + ' (WebKit ignores it)');
      }
    });
    Object.keys(table).forEach(function (name) {
      var row = table[name];
      var v = value[name];
      if (v === undefined) {
        if (row.idlRequired) {
          self.fail('Member ' + type + '.' + name + ' is required and must be an instance of ' + row.idl.replace(/^enum:/, ''));
        }
        if (row.required && row.since <= Math.max(self.version, 3)) self.flag(path + '.' + name, 'missing (required by Apple\'s documentation)');
        return;
      }
      if (row.since > Math.max(self.version, 3)) {
        self.flag(path + '.' + name, 'not a member of ' + type + ' at version ' + self.version + ' (since ' + row.since + '; ignored)');
        return;
      }
      out[name] = self.check(v, row.idl, path + '.' + name);
    });
    return out;
  };
  Checker.prototype.finish = function () {
    var self = this;
    this.flags.forEach(function (f) { violation(self.rec, self.where + ': ' + f); });
  };

  function isURL(s) { try { new URL(s); return true; } catch (e) { return false; } }

  // ApplePaySession.cpp convertAndValidate(ApplePayLineItem) and convertAndValidateTotal.
  function validateLineItem(item, isTotal) {
    if (isTotal) {
      if (!AMOUNT.test(item.amount === undefined ? '' : item.amount)) throw new TypeError('"' + (item.amount === undefined ? '' : item.amount) + '" is not a valid amount.');
      if (item.label === undefined) throw new TypeError('Missing total label.');
      if (Number(item.amount) < 0) throw new TypeError('Total amount must not be negative.');
    } else if (item.type !== 'pending' && !AMOUNT.test(item.amount === undefined ? '' : item.amount)) {
      throw new TypeError('"' + (item.amount === undefined ? '' : item.amount) + '" is not a valid amount.');
    }
  }
  function validateShippingMethods(methods) {
    (methods || []).forEach(function (m) {
      if (!AMOUNT.test(m.amount)) throw new TypeError('"' + m.amount + '" is not a valid amount.');
    });
  }
  function validateBilling(item, name, timing, article) {
    if (item.paymentTiming !== timing) throw new TypeError("'" + name + "' must be " + article + " '" + timing + "' line item.");
    if (item.label === undefined) throw new TypeError("Missing label for '" + name + "'.");
    if (item.type !== 'pending' && !AMOUNT.test(item.amount || '')) throw new TypeError('"' + item.amount + '" is not a valid amount.');
  }
  function validateURLs(req) {
    if (!isURL(req.managementURL)) throw new TypeError('"' + req.managementURL + '" is not a valid URL.');
    if (req.tokenNotificationURL !== undefined && !isURL(req.tokenNotificationURL)) throw new TypeError('"' + req.tokenNotificationURL + '" is not a valid URL.');
  }
  // The WebKit checks of ApplePaySession.cpp / ApplePayRequestBase.cpp beyond the IDL types, on a
  // converted request or details update (names as in the request: total/lineItems/shippingMethods/...).
  function validateDetails(c, d, path) {
    if (d.total) validateLineItem(d.total, true);
    (d.lineItems || []).forEach(function (item, i) {
      validateLineItem(item, false);
      if (item.label === undefined) c.flag(path + '.lineItems[' + i + '].label', 'missing (required by Apple\'s documentation)');
    });
    validateShippingMethods(d.shippingMethods);
    var rec = d.recurringPaymentRequest, auto = d.automaticReloadPaymentRequest, def = d.deferredPaymentRequest;
    if (rec) {
      validateBilling(rec.regularBilling, 'regularBilling', 'recurring', 'a');
      if (rec.trialBilling) validateBilling(rec.trialBilling, 'trialBilling', 'recurring', 'a');
      validateURLs(rec);
    }
    if (auto) {
      validateBilling(auto.automaticReloadBilling, 'automaticReloadBilling', 'automaticReload', 'an');
      if (!AMOUNT.test(auto.automaticReloadBilling.automaticReloadPaymentThresholdAmount || '')) {
        throw new TypeError('"' + auto.automaticReloadBilling.automaticReloadPaymentThresholdAmount + '" is not a valid automaticReloadPaymentThresholdAmount.');
      }
      validateURLs(auto);
    }
    if (def) {
      validateBilling(def.deferredBilling, 'deferredBilling', 'deferred', 'a');
      validateURLs(def);
      var hasDate = def.freeCancellationDate !== undefined && !isNaN(def.freeCancellationDate.getTime());
      if (!hasDate && def.freeCancellationDateTimeZone) throw new TypeError("Unexpected 'freeCancellationDateTimeZone' when 'freeCancellationDate' is not set.");
      if (hasDate && !def.freeCancellationDateTimeZone) throw new TypeError("Missing 'freeCancellationDateTimeZone' when 'freeCancellationDate' is set.");
      if (!def.paymentDescription) throw new TypeError("Missing 'paymentDescription'.");
    }
    var exclusive = ['recurringPaymentRequest', 'automaticReloadPaymentRequest', 'deferredPaymentRequest', 'multiTokenContexts']
      .filter(function (k) { return d[k] !== undefined; });
    if (exclusive.length > 1) c.flag(path, exclusive.join(' and ') + ' cannot be combined (Apple: the request fails)');
  }

  function validateRequest(c, version, request) {
    var r = c.dictionary(request, 'ApplePayPaymentRequest', 'request');
    // ApplePayRequestBase.cpp / PaymentRequestValidator
    if (r.merchantCapabilities && r.merchantCapabilities.length === 0) throw new TypeError('At least one merchant capability must be provided.');
    if (r.supportedNetworks && r.supportedNetworks.length === 0) throw new TypeError('At least one supported network must be provided.');
    if (!/^[A-Z]{2}$/.test(r.countryCode)) c.flag('request.countryCode', '"' + r.countryCode + '" is not an ISO 3166 country code');
    if (!/^[A-Z]{3}$/.test(r.currencyCode)) c.flag('request.currencyCode', '"' + r.currencyCode + '" is not an ISO 4217 currency code');
    if (r.merchantCapabilities && r.merchantCapabilities.indexOf('supports3DS') < 0) c.flag('request.merchantCapabilities', 'must contain "supports3DS" (Apple\'s documentation)');
    validateDetails(c, r, 'request');
    if (version < 4 && r.total && Number(r.total.amount) <= 0) c.flag('request.total.amount', 'must be greater than zero before version 4 (RN-4)');
    return r;
  }

  // ---------------------------------------------------------------- sheet
  var FINAL = { completed: 1, aborted: 1, cancelled: 1 };

  function setPending(rec, name) {
    rec.pending = name;
    rec.pendingToken = (rec.pendingToken || 0) + 1;
    var token = rec.pendingToken;
    clearTimeout(rec.timer);
    rec.timer = setTimeout(function () {
      if (rec.pending === name && rec.pendingToken === token && !FINAL[rec.phase]) {
        record(rec, 'timeout', name, { timeoutMs: TIMEOUT_MS });
        endSession(rec, 'cancelled');
        dispatch(rec, 'cancel', {});
      }
    }, TIMEOUT_MS);
  }
  function clearPending(rec) { rec.pending = null; clearTimeout(rec.timer); rec.timer = null; }
  function endSession(rec, phase) {
    clearPending(rec);
    rec.phase = phase;
    if (activeRecord === rec) activeRecord = null;
  }
  function hasListener(rec, type) {
    return typeof rec.handlers[type] === 'function' || (rec.listeners[type] && rec.listeners[type].size > 0);
  }
  // Events are dispatched asynchronously, to addEventListener listeners and the on... handler.
  function dispatch(rec, type, props) {
    setTimeout(function () {
      var ev = new Event(type, { bubbles: false, cancelable: false });
      Object.keys(props).forEach(function (k) {
        Object.defineProperty(ev, k, { value: props[k], enumerable: true });
      });
      record(rec, 'event', type, props);
      rec.session.dispatchEvent(ev);
    }, 0);
  }

  function applyDetailsUpdate(rec, u) {
    var s = rec.sheet;
    s.total = u.newTotal;
    s.lineItems = u.newLineItems || [];
    if (u.newShippingMethods && u.newShippingMethods.length) {
      s.shippingMethods = u.newShippingMethods;
      var keep = s.shippingMethods.some(function (m) { return s.selectedShippingMethod && m.identifier === s.selectedShippingMethod.identifier; });
      if (!keep) s.selectedShippingMethod = s.shippingMethods[0];
    }
    if (u.newRecurringPaymentRequest) s.recurringPaymentRequest = u.newRecurringPaymentRequest;
    if (u.newAutomaticReloadPaymentRequest) s.automaticReloadPaymentRequest = u.newAutomaticReloadPaymentRequest;
    if (u.newDeferredPaymentRequest) s.deferredPaymentRequest = u.newDeferredPaymentRequest;
    if (u.newMultiTokenContexts) s.multiTokenContexts = u.newMultiTokenContexts;
    s.errors = u.errors || [];
  }

  // ---------------------------------------------------------------- ApplePayError
  var ApplePayErrorImpl = null;

  function enumArgument(value, enumName, index, argName, iface) {
    var s = String(value);
    var known = valuesOf[enumName] || {};
    if (!Object.prototype.hasOwnProperty.call(known, s)) {
      throw new TypeError('Argument ' + index + " ('" + argName + "') to the " + iface + ' constructor must be one of: ' +
        Object.keys(known).map(function (v) { return '"' + v + '"'; }).join(', '));
    }
    return s;
  }

  // ---------------------------------------------------------------- control API (always present)
  function requireSheet(action) {
    var rec = latest;
    if (!rec) throw new Error(action + ': there is no ApplePaySession');
    if (rec.phase !== 'open') throw new Error(action + ': the sheet is not open (state ' + rec.phase + ')');
    if (rec.pending) throw new Error(action + ': the sheet is waiting for the page to complete ' + rec.pending);
    return rec;
  }
  function shopperAction(rec, name, detail) { record(rec, 'event', 'shopper:' + name, detail); }

  var control = {
    state: function () { return latest ? latest.phase : 'none'; },
    pending: function () { return latest ? latest.pending : null; },
    sessions: function () { return constructed; },
    log: function () { return jsonSafe(logEntries); },
    violations: function () { return violationList.slice(); },
    sheet: function () {
      if (!latest) return null;
      var s = latest.sheet;
      return jsonSafe({
        version: latest.version, request: latest.requestAsGiven, total: s.total, lineItems: s.lineItems,
        shippingMethods: s.shippingMethods, selectedShippingMethod: s.selectedShippingMethod || null,
        couponCode: s.couponCode === undefined ? null : s.couponCode, errors: s.errors || [],
        recurringPaymentRequest: s.recurringPaymentRequest || null,
        automaticReloadPaymentRequest: s.automaticReloadPaymentRequest || null,
        deferredPaymentRequest: s.deferredPaymentRequest || null,
        multiTokenContexts: s.multiTokenContexts || null,
        lastPaymentStatus: s.lastPaymentStatus === undefined ? null : s.lastPaymentStatus,
        shippingContact: s.shippingContact || null, paymentMethod: s.paymentMethod || null,
      });
    },
    selectShippingContact: function (contact) {
      var rec = requireSheet('selectShippingContact');
      var fields = rec.request.requiredShippingContactFields || [];
      if (!fields.length) throw new Error('selectShippingContact: the request asks for no shipping contact (requiredShippingContactFields)');
      if (!contact || typeof contact !== 'object') throw new Error('selectShippingContact: give a contact object');
      rec.sheet.shippingContact = JSON.parse(JSON.stringify(contact));
      shopperAction(rec, 'selectShippingContact', contact);
      var redacted = {};
      REDACTED_CONTACT_FIELDS.forEach(function (k) { if (contact[k] !== undefined) redacted[k] = contact[k]; });
      if (!hasListener(rec, 'shippingcontactselected')) { record(rec, 'event', 'shippingcontactselected', { skipped: 'no listener: the sheet completes it' }); return; }
      setPending(rec, 'shippingcontactselected');
      dispatch(rec, 'shippingcontactselected', { shippingContact: redacted });
    },
    selectShippingMethod: function (identifier) {
      var rec = requireSheet('selectShippingMethod');
      var methods = rec.sheet.shippingMethods || [];
      var method = methods.filter(function (m) { return m.identifier === identifier; })[0];
      if (!method) throw new Error('selectShippingMethod: the sheet does not offer "' + identifier + '" (offers: ' + methods.map(function (m) { return m.identifier; }).join(', ') + ')');
      rec.sheet.selectedShippingMethod = method;
      shopperAction(rec, 'selectShippingMethod', identifier);
      if (!hasListener(rec, 'shippingmethodselected')) { record(rec, 'event', 'shippingmethodselected', { skipped: 'no listener: the sheet completes it' }); return; }
      setPending(rec, 'shippingmethodselected');
      dispatch(rec, 'shippingmethodselected', { shippingMethod: JSON.parse(JSON.stringify(jsonSafe(method))) });
    },
    selectPaymentMethod: function (method) {
      var rec = requireSheet('selectPaymentMethod');
      if (!method || typeof method !== 'object') throw new Error('selectPaymentMethod: give {displayName, network, type}');
      if (!Object.prototype.hasOwnProperty.call(valuesOf.ApplePayPaymentMethodType || {}, method.type)) {
        throw new Error('selectPaymentMethod: type must be one of ' + Object.keys(valuesOf.ApplePayPaymentMethodType || {}).join(', '));
      }
      var pm = { displayName: String(method.displayName || ''), network: String(method.network || ''), type: method.type };
      if (method.billingContact && (rec.request.requiredBillingContactFields || []).length) pm.billingContact = method.billingContact;
      rec.sheet.paymentMethod = pm;
      shopperAction(rec, 'selectPaymentMethod', pm);
      if (!hasListener(rec, 'paymentmethodselected')) { record(rec, 'event', 'paymentmethodselected', { skipped: 'no listener: the sheet completes it' }); return; }
      setPending(rec, 'paymentmethodselected');
      dispatch(rec, 'paymentmethodselected', { paymentMethod: JSON.parse(JSON.stringify(pm)) });
    },
    changeCouponCode: function (code) {
      var rec = requireSheet('changeCouponCode');
      if (rec.request.supportsCouponCode !== true) throw new Error('changeCouponCode: the sheet has no coupon field (the request did not set supportsCouponCode at a version that has it)');
      rec.sheet.couponCode = String(code);
      shopperAction(rec, 'changeCouponCode', code);
      if (!hasListener(rec, 'couponcodechanged')) { record(rec, 'event', 'couponcodechanged', { skipped: 'no listener: the sheet completes it' }); return; }
      setPending(rec, 'couponcodechanged');
      dispatch(rec, 'couponcodechanged', { couponCode: String(code) });
    },
    authorize: function (options) {
      var rec = requireSheet('authorize');
      options = options || {};
      var pm = options.paymentMethod || rec.sheet.paymentMethod || { displayName: 'Visa 0492', network: 'Visa', type: 'credit' };
      var payment = {
        token: {
          paymentData: options.paymentData !== undefined ? options.paymentData
            : { version: 'EC_v1', data: 'c3RhbmQtaW4=', signature: 'c3RhbmQtaW4=', header: { ephemeralPublicKey: 'c3RhbmQtaW4=', publicKeyHash: 'c3RhbmQtaW4=', transactionId: 'standin' } },
          paymentMethod: pm,
          transactionIdentifier: options.transactionIdentifier || ('STANDIN' + Date.now().toString(16).toUpperCase()),
        },
      };
      var shipping = options.shippingContact || rec.sheet.shippingContact;
      if (shipping) payment.shippingContact = shipping;
      var billing = options.billingContact || pm.billingContact;
      if (billing) payment.billingContact = billing;
      rec.phase = 'authorizing';
      shopperAction(rec, 'authorize', { paymentMethod: pm });
      setPending(rec, 'paymentauthorized');
      dispatch(rec, 'paymentauthorized', { payment: JSON.parse(JSON.stringify(payment)) });
    },
    cancel: function () {
      var rec = latest;
      if (!rec || !(rec.phase === 'validating' || rec.phase === 'open' || rec.phase === 'authorizing')) {
        throw new Error('cancel: no sheet is showing (state ' + (rec ? rec.phase : 'none') + ')');
      }
      shopperAction(rec, 'cancel', null);
      record(rec, 'cancel', 'shopper', null);
      endSession(rec, 'cancelled');
      dispatch(rec, 'cancel', {});
    },
  };
  Object.defineProperty(window, '__applePay', { value: Object.freeze(control), configurable: false, writable: false });

  if (!AVAILABLE) return;

  // ---------------------------------------------------------------- ApplePayError
  ApplePayErrorImpl = class ApplePayError {
    constructor(errorCode, contactField, message) {
      try {
        if (arguments.length < 1) throw new TypeError('Not enough arguments');
        var code = enumArgument(errorCode, 'ApplePayErrorCode', 1, 'errorCode', 'ApplePayError');
        var field = contactField === undefined ? null : enumArgument(contactField, 'ApplePayErrorContactField', 2, 'contactField', 'ApplePayError');
        var text = message === undefined ? '' : String(message);
      } catch (e) {
        throw thrown(latest, 'new ApplePayError(' + JSON.stringify(jsonSafe([errorCode, contactField, message])).slice(1, -1) + ')', e);
      }
      priv.set(this, { code: code, contactField: field, message: text });
    }
    get code() { return priv.get(this).code; }
    set code(v) { if (Object.prototype.hasOwnProperty.call(valuesOf.ApplePayErrorCode, String(v))) priv.get(this).code = String(v); }
    get contactField() { return priv.get(this).contactField; }
    set contactField(v) { if (v === null || Object.prototype.hasOwnProperty.call(valuesOf.ApplePayErrorContactField, String(v))) priv.get(this).contactField = v === null ? null : String(v); }
    get message() { return priv.get(this).message; }
    set message(v) { priv.get(this).message = String(v); }
  };

  // ---------------------------------------------------------------- ApplePaySession
  function unsignedLong(v) {
    var n = Number(v);
    if (!isFinite(n)) return 0;
    n = Math.trunc(n) % 4294967296;
    return n < 0 ? n + 4294967296 : n;
  }
  function canCreateSession() {
    if (!window.isSecureContext) throw invalidAccess('Trying to start an Apple Pay session from an insecure document.');
  }
  function hasUserGesture() {
    return Boolean(navigator.userActivation && navigator.userActivation.isActive);
  }

  class ApplePaySession extends EventTarget {
    constructor(version, paymentRequest) {
      super();
      var index = constructed + 1;
      var rec = { index: index, t0: performance.now() };
      var where = 'new ApplePaySession(' + String(version) + ', ...)';
      var v;
      var checker;
      try {
        if (arguments.length < 2) throw new TypeError('Not enough arguments');
        canCreateSession();
        if (!hasUserGesture()) throw invalidAccess('Must create a new ApplePaySession from a user gesture handler.');
        v = unsignedLong(version);
        if (typeof version !== 'number' || !Number.isInteger(version)) violation(null, where + ': version ' + JSON.stringify(jsonSafe(version)) + ' is not an integer (converted to ' + v + ')');
        if (!v || v > MAX_VERSION) throw invalidAccess('"' + v + '" is not a supported version.');
        checker = new Checker(null, v, where);
        var request = validateRequest(checker, v, paymentRequest);
      } catch (e) {
        if (checker) checker.finish();
        record(null, 'construct', 'failed', { version: jsonSafe(version) });
        throw thrown(null, where, e);
      }
      constructed = index;
      rec.version = v;
      rec.session = this;
      rec.request = request;
      rec.requestAsGiven = jsonSafe(paymentRequest);
      rec.phase = 'created';
      rec.pending = null;
      rec.handlers = {};
      rec.listeners = {};
      rec.sheet = {
        total: request.total, lineItems: request.lineItems || [], shippingMethods: request.shippingMethods || [],
        selectedShippingMethod: (request.shippingMethods || [])[0] || null,
        couponCode: request.couponCode, errors: [],
        recurringPaymentRequest: request.recurringPaymentRequest, automaticReloadPaymentRequest: request.automaticReloadPaymentRequest,
        deferredPaymentRequest: request.deferredPaymentRequest, multiTokenContexts: request.multiTokenContexts,
      };
      checker.rec = rec;
      checker.finish();
      priv.set(this, rec);
      latest = rec;
      record(rec, 'construct', 'ApplePaySession', { version: v, request: paymentRequest });
    }

    static supportsVersion(version) {
      var v = unsignedLong(version);
      if (!v) throw thrown(latest, 'ApplePaySession.supportsVersion(' + String(version) + ')', invalidAccess());
      try { canCreateSession(); } catch (e) { throw thrown(latest, 'ApplePaySession.supportsVersion', e); }
      return v >= 1 && v <= MAX_VERSION;
    }
    static canMakePayments() {
      try { canCreateSession(); } catch (e) { throw thrown(latest, 'ApplePaySession.canMakePayments', e); }
      return CAN_MAKE_PAYMENTS;
    }
    static canMakePaymentsWithActiveCard(merchantIdentifier) {
      try {
        if (arguments.length < 1) throw new TypeError('Not enough arguments');
        canCreateSession();
      } catch (e) { return Promise.reject(thrown(latest, 'ApplePaySession.canMakePaymentsWithActiveCard', e)); }
      return new Promise(function (resolve) { setTimeout(function () { resolve(CAN_MAKE_PAYMENTS); }, 0); });
    }
    static openPaymentSetup(merchantIdentifier) {
      try {
        if (arguments.length < 1) throw new TypeError('Not enough arguments');
        canCreateSession();
        if (!hasUserGesture()) throw invalidAccess('Must call ApplePaySession.openPaymentSetup from a user gesture handler.');
      } catch (e) { return Promise.reject(thrown(latest, 'ApplePaySession.openPaymentSetup', e)); }
      return new Promise(function (resolve) { setTimeout(function () { resolve(config.openPaymentSetup === true); }, 0); });
    }

    addEventListener(type, listener, options) {
      super.addEventListener(type, listener, options);
      var rec = priv.get(this);
      if (rec && listener) (rec.listeners[type] = rec.listeners[type] || new Set()).add(listener);
    }
    removeEventListener(type, listener, options) {
      super.removeEventListener(type, listener, options);
      var rec = priv.get(this);
      if (rec && rec.listeners[type]) rec.listeners[type].delete(listener);
    }

    begin() {
      var rec = priv.get(this);
      if (rec.phase !== 'created') throw thrown(rec, 'begin()', invalidAccess('Payment session is already active.'));
      if (activeRecord && activeRecord !== rec) throw thrown(rec, 'begin()', invalidAccess('Page already has an active payment session.'));
      activeRecord = rec;
      rec.phase = 'validating';
      record(rec, 'begin', 'begin', null);
      setPending(rec, 'validatemerchant');
      dispatch(rec, 'validatemerchant', { validationURL: VALIDATION_URL });
    }

    abort() {
      var rec = priv.get(this);
      if (!(rec.phase === 'validating' || rec.phase === 'open' || rec.phase === 'authorizing')) {
        throw thrown(rec, 'abort()', invalidAccess());
      }
      record(rec, 'abort', 'abort', { pending: rec.pending });
      endSession(rec, 'aborted');
    }

    completeMerchantValidation(merchantSession) {
      var rec = priv.get(this);
      if (!(rec.phase === 'validating' && rec.pending === 'validatemerchant')) throw thrown(rec, 'completeMerchantValidation()', invalidAccess());
      if (merchantSession === null || typeof merchantSession !== 'object') throw thrown(rec, 'completeMerchantValidation()', new TypeError('Type error'));
      record(rec, 'completion', 'completeMerchantValidation', merchantSession);
      clearPending(rec);
      rec.phase = 'open';
    }

    completeShippingContactSelection(update) {
      var rec = priv.get(this);
      if (arguments.length >= 2) {
        var status = arguments[0];
        return this._positional(rec, 'completeShippingContactSelection', 'shippingcontactselected', status,
          { newShippingMethods: arguments[1], newTotal: arguments[2], newLineItems: arguments[3] }, 'ApplePayShippingContactUpdate');
      }
      this._completeUpdate(rec, 'completeShippingContactSelection', 'shippingcontactselected', 'ApplePayShippingContactUpdate', update);
    }
    completeShippingMethodSelection(update) {
      var rec = priv.get(this);
      if (arguments.length >= 2) {
        return this._positional(rec, 'completeShippingMethodSelection', 'shippingmethodselected', arguments[0],
          { newTotal: arguments[1], newLineItems: arguments[2] }, 'ApplePayShippingMethodUpdate');
      }
      this._completeUpdate(rec, 'completeShippingMethodSelection', 'shippingmethodselected', 'ApplePayShippingMethodUpdate', update);
    }
    completePaymentMethodSelection(update) {
      var rec = priv.get(this);
      if (arguments.length >= 2) {
        return this._positional(rec, 'completePaymentMethodSelection', 'paymentmethodselected', 0,
          { newTotal: arguments[0], newLineItems: arguments[1] }, 'ApplePayPaymentMethodUpdate');
      }
      this._completeUpdate(rec, 'completePaymentMethodSelection', 'paymentmethodselected', 'ApplePayPaymentMethodUpdate', update);
    }
    completeCouponCodeChange(update) {
      this._completeUpdate(priv.get(this), 'completeCouponCodeChange', 'couponcodechanged', 'ApplePayCouponCodeUpdate', update);
    }

    completePayment(result) {
      var rec = priv.get(this);
      var where = 'completePayment()';
      if (!(rec.phase === 'authorizing' && rec.pending === 'paymentauthorized')) throw thrown(rec, where, invalidAccess());
      var positional = result === null || typeof result !== 'object';
      if (positional) {
        if (rec.version >= 3) violation(rec, where + ': the old status-only form at version ' + rec.version + ' (version 3 takes an ApplePayPaymentAuthorizationResult)');
        result = { status: result };
      }
      var c = new Checker(rec, rec.version, where);
      var r;
      try {
        if (rec.version < 3 && !positional) c.flag('result', 'ApplePayPaymentAuthorizationResult is version 3 and later');
        r = c.dictionary(result, 'ApplePayPaymentAuthorizationResult', 'result');
        var status = unsignedLong(r.status) % 65536;
        if (!(status >= 0 && status <= 7)) throw invalidAccess();
        if (r.orderDetails && !isURL(r.orderDetails.webServiceURL)) throw new TypeError('"' + r.orderDetails.webServiceURL + '" is not a valid URL.');
      } catch (e) { c.finish(); throw thrown(rec, where, e); }
      c.finish();
      var errors = (r.errors || []).slice();
      var effective = status;
      if (status === 2) { effective = 1; errors.unshift(new ApplePayErrorImpl('billingContactInvalid')); }
      if (status === 3) { effective = 1; errors.unshift(new ApplePayErrorImpl('shippingContactInvalid', 'postalAddress')); }
      if (status === 4) { effective = 1; errors.unshift(new ApplePayErrorImpl('shippingContactInvalid')); }
      var isFinal;
      if (effective === 0) isFinal = true;
      else if (effective >= 5) isFinal = false;
      else isFinal = errors.length === 0 || errors.some(function (e) { return e.code === 'unknown'; });
      record(rec, 'completion', 'completePayment', { result: result, final: isFinal });
      rec.sheet.lastPaymentStatus = status;
      rec.sheet.errors = errors;
      if (isFinal) endSession(rec, 'completed');
      else { clearPending(rec); rec.phase = 'open'; }
    }

    _completeUpdate(rec, method, eventName, dictName, update) {
      var where = method + '()';
      if (!(rec.phase === 'open' && rec.pending === eventName)) throw thrown(rec, where, invalidAccess());
      var c = new Checker(rec, rec.version, where);
      var u;
      try {
        if (rec.version < 3) c.flag('update', dictName + ' is version 3 and later (versions 1 and 2 take positional arguments)');
        u = c.dictionary(update, dictName, 'update');
        validateDetails(c, { total: u.newTotal, lineItems: u.newLineItems, shippingMethods: u.newShippingMethods,
          recurringPaymentRequest: u.newRecurringPaymentRequest, automaticReloadPaymentRequest: u.newAutomaticReloadPaymentRequest,
          deferredPaymentRequest: u.newDeferredPaymentRequest, multiTokenContexts: u.newMultiTokenContexts }, 'update');
      } catch (e) { c.finish(); throw thrown(rec, where, e); }
      c.finish();
      record(rec, 'completion', method, update);
      clearPending(rec);
      applyDetailsUpdate(rec, u);
    }

    // The version 1/2 forms (ApplePaySession.cpp): a status other than SUCCESS for a shipping method
    // cancels the sheet; for a shipping contact it becomes an error.
    _positional(rec, method, eventName, status, parts, dictName) {
      var where = method + '(status, ...)';
      if (!(rec.phase === 'open' && rec.pending === eventName)) throw thrown(rec, where, invalidAccess());
      if (rec.version >= 3) violation(rec, where + ': the old positional form at version ' + rec.version + ' (version 3 takes an ' + dictName + ')');
      status = unsignedLong(status) % 65536;
      if (status > 7) throw thrown(rec, where, invalidAccess());
      if (method === 'completeShippingMethodSelection' && status !== 0) {
        record(rec, 'completion', method, { status: status, cancels: true });
        endSession(rec, 'cancelled');
        dispatch(rec, 'cancel', {});
        return;
      }
      var update = { newTotal: parts.newTotal, newLineItems: parts.newLineItems || [] };
      if (parts.newShippingMethods) update.newShippingMethods = parts.newShippingMethods;
      if (method === 'completeShippingContactSelection' && status !== 0) {
        var code = { 2: ['billingContactInvalid'], 3: ['shippingContactInvalid', 'postalAddress'], 4: ['shippingContactInvalid'] }[status] || ['unknown'];
        update.errors = [new ApplePayErrorImpl(code[0], code[1])];
      }
      // the positional form is converted by WebKit itself: no unknown-member checks apply.
      var c = new Checker(rec, Math.max(rec.version, 3), where);
      var u;
      try {
        u = c.dictionary(update, dictName, 'update');
        validateDetails(c, { total: u.newTotal, lineItems: u.newLineItems, shippingMethods: u.newShippingMethods }, 'update');
      } catch (e) { c.finish(); throw thrown(rec, where, e); }
      c.finish();
      record(rec, 'completion', method, { status: status, update: update });
      clearPending(rec);
      applyDetailsUpdate(rec, u);
    }
  }

  [['STATUS_SUCCESS', 0], ['STATUS_FAILURE', 1], ['STATUS_INVALID_BILLING_POSTAL_ADDRESS', 2],
    ['STATUS_INVALID_SHIPPING_POSTAL_ADDRESS', 3], ['STATUS_INVALID_SHIPPING_CONTACT', 4], ['STATUS_PIN_REQUIRED', 5],
    ['STATUS_PIN_INCORRECT', 6], ['STATUS_PIN_LOCKOUT', 7]].forEach(function (c) {
    Object.defineProperty(ApplePaySession, c[0], { value: c[1], enumerable: true });
    Object.defineProperty(ApplePaySession.prototype, c[0], { value: c[1], enumerable: true });
  });

  // on... EventHandler attributes: setting one registers a listener at that point (HTML event handler semantics).
  EVENT_TYPES.forEach(function (type) {
    Object.defineProperty(ApplePaySession.prototype, 'on' + type, {
      configurable: true, enumerable: true,
      get: function () { var rec = priv.get(this); return (rec && rec.handlers[type]) || null; },
      set: function (fn) {
        var rec = priv.get(this);
        if (!rec) return;
        var first = !('wrapper_' + type in rec);
        rec.handlers[type] = typeof fn === 'function' ? fn : null;
        if (first) {
          var session = this;
          rec['wrapper_' + type] = function (ev) {
            var h = rec.handlers[type];
            if (typeof h !== 'function') return;
            try { h.call(session, ev); } catch (e) {
              violation(rec, 'on' + type + ' threw ' + (e && e.name) + ': ' + (e && e.message));
              (window.reportError || console.error).call(window, e);
            }
          };
          EventTarget.prototype.addEventListener.call(this, type, rec['wrapper_' + type]);
        }
      },
    });
  });
  ['_completeUpdate', '_positional'].forEach(function (k) {
    Object.defineProperty(ApplePaySession.prototype, k, { enumerable: false });
  });

  Object.defineProperty(window, 'ApplePaySession', { value: ApplePaySession, configurable: true, writable: true });
  Object.defineProperty(window, 'ApplePayError', { value: ApplePayErrorImpl, configurable: true, writable: true });
})();

"""Checks of the Apple Pay JS stand-in (applepay-standin.js) and the SDK button stand-in
(apple-pay-sdk-standin.js) in headless Chromium, on a small page of its own served from 127.0.0.1
(a secure context), and of applepayjs-dictionaries.json against the tables it was taken from
(Tests/PayServiceTestSupport/ApplePayJSSchema.swift) and the copy built into the stand-in.

    python3 examples/web/browser-tests/test_standin.py      (exit status 0 = all passed)
"""

import functools
import http.server
import json
import os
import re
import sys
import tempfile
import threading
import time
import unittest

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


STANDIN = read(os.path.join(HERE, "applepay-standin.js"))
SDK = read(os.path.join(HERE, "apple-pay-sdk-standin.js"))
DICTIONARIES = os.path.join(HERE, "applepayjs-dictionaries.json")
SWIFT = os.path.join(ROOT, "Tests", "PayServiceTestSupport", "ApplePayJSSchema.swift")

PAGE = """<!doctype html><meta charset="utf-8"><title>stand-in check</title>
<script src="sdk.js"></script>
<button id="go">go</button>
<apple-pay-button id="apb" buttonstyle="black" type="buy" locale="en-US"
  style="--apple-pay-button-width: 200px; --apple-pay-button-height: 44px; --apple-pay-button-border-radius: 8px"></apple-pay-button>
<script>
  window.results = [];
  window.events = [];
  window.onClick = null;
  function run(fn) {
    try { var value = fn(); results.push({ok: true, value: value === undefined ? null : value}); }
    catch (e) { results.push({ok: false, name: e.name, message: e.message}); }
  }
  document.getElementById('go').addEventListener('click', function () { if (window.onClick) run(window.onClick); });
  document.getElementById('apb').addEventListener('click', function () { window.buttonClicks = (window.buttonClicks || 0) + 1; });
  window.REQUEST = {
    countryCode: 'US', currencyCode: 'USD', merchantCapabilities: ['supports3DS'], supportedNetworks: ['visa', 'masterCard'],
    total: {label: 'Coffee', amount: '20.00'},
    requiredShippingContactFields: ['postalAddress', 'name'],
    shippingMethods: [{label: 'Standard', detail: '3-5 days', amount: '5.00', identifier: 'std'},
                      {label: 'Express', detail: '1 day', amount: '15.00', identifier: 'exp'}],
  };
  // A page that answers every event: what the shop's app.js does, minus the server.
  function wire(s, record) {
    s.onvalidatemerchant = function (e) { events.push(['validatemerchant', e.validationURL]); if (record.autoValidate) s.completeMerchantValidation({merchantSessionIdentifier: 'x'}); };
    s.onshippingcontactselected = function (e) { events.push(['shippingcontactselected', e.shippingContact]); };
    s.onshippingmethodselected = function (e) { events.push(['shippingmethodselected', e.shippingMethod]); };
    s.onpaymentmethodselected = function (e) { events.push(['paymentmethodselected', e.paymentMethod]); };
    s.onpaymentauthorized = function (e) { events.push(['paymentauthorized', e.payment]); };
    s.oncancel = function (e) { events.push(['cancel', e.type, e instanceof Event]); };
    return s;
  }
</script>"""

CONTACT = {"givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com", "phoneNumber": "+15555550100",
           "addressLines": ["1 Infinite Loop"], "locality": "Cupertino", "administrativeArea": "CA",
           "postalCode": "95014", "countryCode": "US", "country": "United States", "subLocality": "", "subAdministrativeArea": "Santa Clara"}


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def swift_tables():
    text = read(SWIFT)
    members = set()
    for m in re.finditer(r'Member\((rootType|"(\w+)"), "(\w+)", since: (\d+)(, required: true)?', text):
        members.add(("ApplePayPaymentRequest" if m.group(1) == "rootType" else m.group(2), m.group(3), int(m.group(4)), bool(m.group(5))))
    values = {(m.group(1), m.group(2), int(m.group(3))) for m in re.finditer(r'Value\("(\w+)", "(\w+)", since: (\d+)\)', text)}
    return members, values


class StandinTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(cls.tmp.name, "index.html"), "w", encoding="utf-8") as f:
            f.write(PAGE)
        with open(os.path.join(cls.tmp.name, "sdk.js"), "w", encoding="utf-8") as f:
            f.write(SDK)
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=cls.tmp.name))
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d/index.html" % cls.server.server_address[1]
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=900,700"):
            options.add_argument(arg)
        cls.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        cls.script_id = None

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.shutdown()
        cls.server.server_close()
        cls.tmp.cleanup()

    # -- helpers
    def load(self, **config):
        if self.script_id is not None:
            self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": self.script_id})
        source = "window.__applePayConfig = %s;\n%s" % (json.dumps(config), STANDIN)
        type(self).script_id = self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})["identifier"]
        self.driver.get(self.url)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def click(self, body):
        """Runs `body` (JS statements, may `return`) in a real click's handler; its result or exception."""
        count = self.js("return results.length")
        self.js("window.onClick = function () { %s };" % body)
        self.driver.find_element(By.ID, "go").click()
        self.wait(lambda: self.js("return results.length") > count, "the click handler")
        return self.js("return results[results.length - 1]")

    def wait(self, predicate, what, timeout=5):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for " + what)
            time.sleep(0.02)

    def api(self, name, *args):
        return self.js("return window.__applePay.%s(...arguments)" % name, *args)

    def api_error(self, name, *args):
        return self.js("try { window.__applePay.%s(...arguments); return null } catch (e) { return e.message }" % name, *args)

    def violations(self):
        return self.api("violations")

    def open_sheet(self, extra_request="", auto=True, version=14):
        """A session begun in a click, its merchant validation completed by the page: the sheet open."""
        result = self.click("window.s = wire(new ApplePaySession(%d, Object.assign({}, REQUEST, %s)), {autoValidate: %s}); s.begin();"
                            % (version, extra_request or "{}", "true" if auto else "false"))
        self.assertTrue(result["ok"], result)
        if auto:
            self.wait(lambda: self.api("state") == "open", "the sheet to open")

    # -- tests
    def test_dictionaries_match_the_swift_tables_and_the_built_in_copy(self):
        data = json.loads(read(DICTIONARIES))
        members, values = swift_tables()
        ours = {(m["type"], m["name"], m["since"], bool(m.get("required"))) for m in data["members"] if "source" not in m}
        self.assertEqual(ours, members)
        self.assertEqual({(v["type"], v["value"], v["since"]) for v in data["values"] if "source" not in v}, values)
        built_in = re.search(r"var BUILTIN_DICTIONARIES = (\{.*?\});\n", STANDIN).group(1)
        self.assertEqual(json.loads(built_in), data)

    def test_unavailable_defines_no_apple_pay(self):
        self.load(available=False)
        self.assertEqual(self.js("return [typeof window.ApplePaySession, typeof window.ApplePayError, 'ApplePaySession' in window]"),
                         ["undefined", "undefined", False])
        self.assertEqual(self.api("state"), "none")

    def test_static_methods_and_constants(self):
        self.load(maxVersion=10, canMakePayments=False)
        self.assertEqual(self.js("return [1, 10, 11, 14].map(v => ApplePaySession.supportsVersion(v))"), [True, True, False, False])
        self.assertEqual(self.js("return ApplePaySession.canMakePayments()"), False)
        self.assertEqual(self.js("return ApplePaySession.canMakePaymentsWithActiveCard('merchant.x')"), False)
        self.assertEqual(self.js("return [ApplePaySession.STATUS_SUCCESS, ApplePaySession.STATUS_FAILURE, ApplePaySession.STATUS_PIN_LOCKOUT]"), [0, 1, 7])
        self.assertEqual(self.js("try { ApplePaySession.supportsVersion(0) } catch (e) { return e.name }"), "InvalidAccessError")

    def test_user_gesture_required(self):
        self.load()
        error = self.js("try { new ApplePaySession(14, REQUEST); return null } catch (e) { return [e.name, e.message] }")
        self.assertEqual(error, ["InvalidAccessError", "Must create a new ApplePaySession from a user gesture handler."])
        self.assertEqual(self.api("sessions"), 0)
        self.assertEqual(self.api("state"), "none")
        self.assertTrue(any("user gesture" in v for v in self.violations()))
        self.assertTrue(self.click("window.s = new ApplePaySession(14, REQUEST);")["ok"])
        self.assertEqual(self.api("sessions"), 1)
        self.assertEqual(self.api("state"), "created")

    def test_unsupported_version_and_bad_requests(self):
        self.load(maxVersion=10)
        result = self.click("new ApplePaySession(12, REQUEST);")
        self.assertEqual((result["name"], result["message"]), ("InvalidAccessError", '"12" is not a supported version.'))
        result = self.click("var r = Object.assign({}, REQUEST); delete r.countryCode; new ApplePaySession(10, r);")
        self.assertEqual(result["name"], "TypeError")
        self.assertIn("countryCode", result["message"])
        result = self.click("new ApplePaySession(3, Object.assign({}, REQUEST, {supportedNetworks: ['dankort']}));")
        self.assertEqual((result["name"], result["message"]), ("TypeError", '"dankort" is not a valid payment network.'))
        result = self.click("new ApplePaySession(3, Object.assign({}, REQUEST, {total: {label: 'x', amount: '1,00'}}));")
        self.assertEqual((result["name"], result["message"]), ("TypeError", '"1,00" is not a valid amount.'))
        self.assertEqual(self.api("sessions"), 0)
        # Members newer than the version and unknown members: accepted (WebKit ignores them) but violations.
        self.assertTrue(self.click("new ApplePaySession(10, Object.assign({}, REQUEST, {supportsCouponCode: true, colour: 'red'}));")["ok"])
        found = self.violations()
        self.assertTrue(any("request.supportsCouponCode: not a member of ApplePayPaymentRequest at version 10" in v for v in found), found)
        self.assertTrue(any("request.colour: not a member of ApplePayPaymentRequest" in v for v in found), found)

    def test_date_members_must_be_dates(self):
        self.load()
        result = self.click("""new ApplePaySession(14, Object.assign({}, REQUEST, {recurringPaymentRequest: {
            paymentDescription: 'Club', managementURL: 'https://shop.example/manage',
            regularBilling: {label: 'Monthly', amount: '9.00', paymentTiming: 'recurring', recurringPaymentStartDate: '2026-12-01T00:00:00Z'}}}));""")
        self.assertTrue(result["ok"], result)
        self.assertTrue(any("recurringPaymentStartDate: a string where a Date is due" in v for v in self.violations()), self.violations())
        result = self.click("""new ApplePaySession(14, Object.assign({}, REQUEST, {recurringPaymentRequest: {
            paymentDescription: 'Club', managementURL: 'https://shop.example/manage',
            regularBilling: {label: 'Monthly', amount: '9.00', recurringPaymentStartDate: new Date()}}}));""")
        self.assertEqual((result["name"], result["message"]), ("TypeError", "'regularBilling' must be a 'recurring' line item."))

    def test_second_session_cannot_begin(self):
        self.load()
        self.assertTrue(self.click("window.s1 = new ApplePaySession(14, REQUEST); s1.begin();")["ok"])
        self.assertEqual(self.api("state"), "validating")
        self.assertEqual(self.api("pending"), "validatemerchant")
        result = self.click("window.s2 = new ApplePaySession(14, REQUEST); s2.begin();")
        self.assertEqual((result["name"], result["message"]), ("InvalidAccessError", "Page already has an active payment session."))
        result = self.click("s1.begin();")
        self.assertEqual((result["name"], result["message"]), ("InvalidAccessError", "Payment session is already active."))
        self.assertEqual(self.api("sessions"), 2)

    def test_completions_out_of_turn_throw(self):
        self.load(validationURL="https://apple-pay-gateway.apple.com/paymentservices/startSession")
        self.open_sheet(auto=False)
        self.wait(lambda: self.js("return events.length") == 1, "onvalidatemerchant")
        self.assertEqual(self.js("return events[0]"), ["validatemerchant", "https://apple-pay-gateway.apple.com/paymentservices/startSession"])
        for call in ("s.completePayment({status: 0})", "s.completeShippingMethodSelection({newTotal: {label: 'x', amount: '1.00'}})",
                     "s.completePaymentMethodSelection({newTotal: {label: 'x', amount: '1.00'}})", "s.completeCouponCodeChange({newTotal: {label: 'x', amount: '1.00'}})"):
            error = self.js("try { %s; return null } catch (e) { return [e.name, e.message] }" % call)
            self.assertEqual(error, ["InvalidAccessError", "The object does not support the operation or argument."], call)
        self.assertEqual(self.js("try { s.completeMerchantValidation('session'); return null } catch (e) { return e.name }"), "TypeError")
        self.js("s.completeMerchantValidation({merchantSessionIdentifier: 'x'})")
        self.assertEqual(self.api("state"), "open")
        self.assertEqual(self.js("try { s.completeMerchantValidation({}); return null } catch (e) { return e.name }"), "InvalidAccessError")
        self.assertGreaterEqual(len([v for v in self.violations() if "threw" in v]), 6)

    def test_full_flow_and_update_checks(self):
        self.load()
        self.open_sheet()
        self.assertEqual(self.api_error("changeCouponCode", "SAVE"), "changeCouponCode: the sheet has no coupon field (the request did not set supportsCouponCode at a version that has it)")
        self.assertIn("does not offer", self.api_error("selectShippingMethod", "teleport"))
        self.api("selectShippingContact", CONTACT)
        self.assertEqual(self.api("pending"), "shippingcontactselected")
        self.assertIn("waiting for the page", self.api_error("authorize", {}))
        self.wait(lambda: self.js("return events.length") == 2, "onshippingcontactselected")
        self.assertEqual(self.js("return events[1][1]"), {"locality": "Cupertino", "administrativeArea": "CA", "postalCode": "95014",
                                                         "countryCode": "US", "country": "United States", "subLocality": "", "subAdministrativeArea": "Santa Clara"})
        # errors must be ApplePayErrors
        error = self.js("try { s.completeShippingContactSelection({newTotal: {label: 'Coffee', amount: '25.00'}, errors: [{code: 'unknown'}]}); return null } catch (e) { return e.name }")
        self.assertEqual(error, "TypeError")
        self.js("""s.completeShippingContactSelection({newTotal: {label: 'Coffee', amount: '25.00'}, newLineItems: [{label: 'Shipping', amount: '5.00'}],
                   errors: [new ApplePayError('shippingContactInvalid', 'postalCode', 'We do not ship there')], mood: 'happy'})""")
        self.assertIsNone(self.api("pending"))
        sheet = self.api("sheet")
        self.assertEqual(sheet["total"], {"label": "Coffee", "amount": "25.00"})
        self.assertEqual(sheet["errors"], [{"code": "shippingContactInvalid", "contactField": "postalCode", "message": "We do not ship there"}])
        self.assertTrue(any("update.mood: not a member of ApplePayShippingContactUpdate" in v for v in self.violations()))
        self.api("selectShippingMethod", "exp")
        self.wait(lambda: self.js("return events.length") == 3, "onshippingmethodselected")
        self.assertEqual(self.js("return events[2][1].identifier"), "exp")
        self.js("s.completeShippingMethodSelection({newTotal: {label: 'Coffee', amount: '35.00'}, errors: []})")
        self.assertTrue(any("update.errors: not a member of ApplePayShippingMethodUpdate" in v for v in self.violations()), self.violations())
        self.assertEqual(self.api("sheet")["selectedShippingMethod"]["identifier"], "exp")
        self.api("selectPaymentMethod", {"displayName": "MasterCard 1471", "network": "MasterCard", "type": "debit"})
        self.wait(lambda: self.js("return events.length") == 4, "onpaymentmethodselected")
        self.js("s.completePaymentMethodSelection({newTotal: {label: 'Coffee', amount: '35.00'}})")
        self.api("authorize", {"transactionIdentifier": "T1"})
        self.assertEqual(self.api("state"), "authorizing")
        self.wait(lambda: self.js("return events.length") == 5, "onpaymentauthorized")
        payment = self.js("return events[4][1]")
        self.assertEqual(payment["token"]["transactionIdentifier"], "T1")
        self.assertEqual(payment["token"]["paymentMethod"]["network"], "MasterCard")
        self.assertEqual(payment["shippingContact"]["givenName"], "Ada")
        # FAILURE with a field error: the sheet stays open (WebKit isFinalStateResult) ...
        self.js("s.completePayment({status: ApplePaySession.STATUS_FAILURE, errors: [new ApplePayError('shippingContactInvalid', 'phoneNumber', 'Bad phone')]})")
        self.assertEqual((self.api("state"), self.api("pending")), ("open", None))
        self.assertEqual(self.api("sheet")["lastPaymentStatus"], 1)
        self.api("authorize", {})
        self.wait(lambda: self.js("return events.length") == 6, "onpaymentauthorized again")
        self.js("s.completePayment({status: ApplePaySession.STATUS_SUCCESS})")
        self.assertEqual(self.api("state"), "completed")
        self.assertEqual(self.api("sheet")["lastPaymentStatus"], 0)
        self.assertEqual(self.js("try { s.abort(); return null } catch (e) { return e.name }"), "InvalidAccessError")
        kinds = [entry["kind"] for entry in self.api("log")]
        for kind in ("construct", "begin", "event", "completion", "error"):
            self.assertIn(kind, kinds)
        self.assertEqual(json.loads(json.dumps(self.api("log"))), self.api("log"))

    def test_supports_version_up_to_14_by_default(self):
        self.load()
        self.assertEqual(self.js("return [3, 12, 13, 14, 15].map(v => ApplePaySession.supportsVersion(v))"),
                         [True, True, True, True, False])

    def test_payment_method_update_errors_from_version_14(self):
        """ApplePayPaymentMethodUpdate has `errors` from 14: the sheet shows them at 14; at 12 they
        are not a member (a violation) and the sheet shows none."""
        card = {"displayName": "JCB 0005", "network": "JCB", "type": "credit"}
        update = ("s.completePaymentMethodSelection({newTotal: {label: 'Coffee', amount: '20.00'},"
                  " errors: [new ApplePayError('unknown', undefined, 'Use another card.')]})")
        for version, shown in ((14, [{"code": "unknown", "contactField": None, "message": "Use another card."}]), (12, [])):
            with self.subTest(version=version):
                self.load()
                self.open_sheet(version=version)
                self.api("selectPaymentMethod", card)
                self.wait(lambda: self.js("return events.length") == 2, "onpaymentmethodselected")
                self.js(update)
                sheet = self.api("sheet")
                self.assertEqual((sheet["version"], sheet["errors"]), (version, shown))
                self.assertEqual(self.api("state"), "open")
                found = [v for v in self.violations() if "update.errors" in v]
                self.assertEqual(bool(found), version < 14, found)

    def test_failure_without_errors_closes_the_sheet(self):
        self.load()
        self.open_sheet()
        self.api("authorize", {})
        self.wait(lambda: self.api("pending") == "paymentauthorized" and self.js("return events.length") == 2, "onpaymentauthorized")
        self.js("s.completePayment({status: ApplePaySession.STATUS_FAILURE, errors: [new ApplePayError('unknown', undefined, 'Declined')]})")
        self.assertEqual(self.api("state"), "completed")

    def test_coupon_code(self):
        self.load()
        self.open_sheet("{supportsCouponCode: true}")
        self.js("s.oncouponcodechanged = function (e) { events.push(['couponcodechanged', e.couponCode]); }")
        self.api("changeCouponCode", "SAVE10")
        self.wait(lambda: self.js("return events.length") == 2, "oncouponcodechanged")
        self.assertEqual(self.js("return events[1]"), ["couponcodechanged", "SAVE10"])
        self.js("s.completeCouponCodeChange({newTotal: {label: 'Coffee', amount: '18.00'}, errors: [new ApplePayError('couponCodeExpired', undefined, 'Expired')]})")
        self.assertEqual(self.api("sheet")["couponCode"], "SAVE10")
        self.assertEqual(self.js("try { new ApplePayError('nope'); return null } catch (e) { return e.name }"), "TypeError")
        self.assertEqual(self.js("try { new ApplePayError('unknown', null); return null } catch (e) { return e.name }"), "TypeError")

    def test_timeout_cancels(self):
        self.load(timeoutMs=500)
        self.open_sheet(auto=False)
        self.assertEqual(self.api("state"), "validating")
        self.wait(lambda: self.api("state") == "cancelled", "the sheet to time out", timeout=3)
        self.wait(lambda: self.js("return events.length") == 2, "oncancel")
        self.assertEqual(self.js("return events[1]"), ["cancel", "cancel", True])
        self.assertIn("timeout", [entry["kind"] for entry in self.api("log")])
        self.assertEqual(self.js("try { s.completeMerchantValidation({}); return null } catch (e) { return e.name }"), "InvalidAccessError")
        # the page may start again after the sheet ended
        self.assertTrue(self.click("window.s3 = new ApplePaySession(14, REQUEST); s3.begin();")["ok"])

    def test_abort_gives_no_oncancel(self):
        self.load()
        self.open_sheet()
        self.api("selectShippingContact", CONTACT)
        self.js("s.abort()")
        self.assertEqual(self.api("state"), "aborted")
        time.sleep(0.3)
        self.assertNotIn("cancel", [e[0] for e in self.js("return events")])
        error = self.js("try { s.completeShippingContactSelection({newTotal: {label: 'x', amount: '1.00'}}); return null } catch (e) { return e.name }")
        self.assertEqual(error, "InvalidAccessError")
        self.assertIn("no sheet is showing", self.api_error("cancel"))

    def test_shopper_cancel(self):
        self.load()
        self.open_sheet()
        self.api("cancel")
        self.assertEqual(self.api("state"), "cancelled")
        self.wait(lambda: ["cancel", "cancel", True] in self.js("return events"), "oncancel")

    def test_apple_pay_button(self):
        self.load()
        button = self.driver.find_element(By.ID, "apb")
        self.assertEqual(button.get_attribute("role"), "button")
        self.assertEqual(button.get_attribute("tabindex"), "0")
        self.assertEqual(button.get_attribute("aria-label"), "Buy with Apple Pay")
        self.assertEqual(self.js("return arguments[0].shadowRoot.querySelector('.label').textContent", button), "Buy with Apple Pay")
        self.assertEqual((button.size["width"], button.size["height"]), (200, 44))
        self.assertEqual(self.js("return getComputedStyle(arguments[0]).borderTopLeftRadius", button), "8px")
        self.assertEqual(self.js("return getComputedStyle(arguments[0].shadowRoot.querySelector('.button')).backgroundColor", button), "rgb(0, 0, 0)")
        button.click()
        self.assertEqual(self.js("return window.buttonClicks"), 1)
        self.js("arguments[0].focus()", button)
        button.send_keys(Keys.ENTER)
        self.assertEqual(self.js("return window.buttonClicks"), 2)
        # keyboard activation is a user gesture: a session can be created in the click it causes
        self.js("document.getElementById('apb').addEventListener('click', function () { run(function () { new ApplePaySession(14, REQUEST); }); })")
        button.send_keys(Keys.SPACE)
        self.assertEqual(self.js("return window.buttonClicks"), 3)
        self.assertTrue(self.js("return results[results.length - 1]")["ok"])
        self.js("arguments[0].hidden = true", button)
        self.assertFalse(button.is_displayed())


if __name__ == "__main__":
    started = time.monotonic()
    result = unittest.main(exit=False, verbosity=2).result
    print("%.1f s" % (time.monotonic() - started))
    sys.exit(0 if result.wasSuccessful() else 1)

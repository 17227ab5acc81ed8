#!/usr/bin/env python3
"""The example shop (examples/web) in a real browser: headless Chromium from Debian's packages,
driven with selenium, buying through bridge.py and the release payservice. The Apple Pay sheet is
applepay-standin.js, injected before the page's scripts; a shopper's actions on the sheet are its
control API (window.__applePay). See harness.py for what runs where.

    PAYSERVICE_BINARY=.build/release/payservice python3 examples/web/browser-tests/test_browser.py

Needs chromium, chromium-driver (Debian), selenium (PyPI) and openssl, and the release build of
payservice, apple-session-test-server and stripe-test-server. Screenshots go to
PAYSERVICE_SCREENSHOTS (default: a temporary directory, printed). Every test fails on an uncaught
error or a console error on the page, and on any Apple Pay JS misuse the stand-in saw.
"""

import json
import os
import re
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import wait_for  # noqa: E402

from selenium.webdriver.common.by import By  # noqa: E402

ADA = {
    "givenName": "Ada", "familyName": "Lovelace", "emailAddress": "ada@example.com",
    "phoneNumber": "+1 408 555 0100", "addressLines": ["1 Infinite Loop"], "locality": "Cupertino",
    "administrativeArea": "CA", "postalCode": "95014", "countryCode": "US", "country": "United States",
}
ADA_BILLING = {k: v for k, v in ADA.items() if k not in ("emailAddress", "phoneNumber")}
NEW_YORK = dict(ADA, addressLines=["350 Fifth Avenue"], locality="New York", administrativeArea="NY",
                postalCode="10118")
# The summary's last row, before its amount.
TOTAL = "Total due today | Shipping and tax are confirmed for your address in Apple Pay."
# Apple Pay JS names networks as PassKit does ("Visa", "AmEx", "MasterCard").
VISA = {"displayName": "Visa 0492", "network": "Visa", "type": "credit"}
# A card the shop does not take (shop.yaml's supportedNetworks: Visa, Mastercard, Amex, Discover).
JCB = {"displayName": "JCB 0005", "network": "JCB", "type": "credit"}
CARD_REFUSED = "This card can’t be used for this purchase. Try another card."


def payment(payment_data="tok_visa", card=VISA, contact=None, billing=None, transaction="5394A8A3B4C9"):
    """What the shopper authorizes (the stand-in's authorize(): it builds the ApplePayPayment)."""
    return {"paymentData": payment_data, "paymentMethod": card, "transactionIdentifier": transaction,
            "shippingContact": contact or ADA, "billingContact": billing or ADA_BILLING}


class Suite:
    """What every test shares: the test servers, the shops and the browser (started once)."""

    directory = None
    apple = stripe = sdk = None
    shop = stripe_shop = None
    driver = None
    script_id = None
    screenshots = None


def setUpModule():
    try:
        start()
    except BaseException:
        tearDownModule()
        raise


def start():
    Suite.directory = tempfile.mkdtemp(prefix="payservice-browser-")
    Suite.screenshots = os.environ.get("PAYSERVICE_SCREENSHOTS") or os.path.join(Suite.directory, "screenshots")
    os.makedirs(Suite.screenshots, exist_ok=True)
    Suite.apple = harness.Announcing([os.path.join(harness.BIN, "apple-session-test-server"), "--merchant",
                                      harness.MERCHANT, "--domain", harness.DOMAIN, "--now", harness.NOW])
    Suite.stripe = harness.Announcing([os.path.join(harness.BIN, "stripe-test-server")])
    sandbox_dir = os.path.join(Suite.directory, "sandbox")
    stripe_dir = os.path.join(Suite.directory, "stripe")
    os.makedirs(sandbox_dir)
    os.makedirs(stripe_dir)
    Suite.shop = harness.Shop(sandbox_dir, harness.shop_config(sandbox_dir, Suite.apple))
    Suite.stripe_shop = harness.Shop(
        stripe_dir, harness.shop_config(stripe_dir, Suite.apple, Suite.stripe),
        env={"STRIPE_SECRET_KEY": Suite.stripe.announcement["secretKey"]}, name="stripe")
    Suite.sdk = harness.SDKServer(Suite.directory)
    Suite.driver = harness.chromium(Suite.sdk.port)


def tearDownModule():
    if Suite.driver:
        Suite.driver.quit()
    for shop in (Suite.shop, Suite.stripe_shop):
        if shop:
            shop.stop()
    for server in (Suite.apple, Suite.stripe):
        if server:
            server.stop()
    if Suite.sdk:
        Suite.sdk.shutdown()
        Suite.sdk.server_close()
    print("browser suite: screenshots in %s" % Suite.screenshots, file=sys.stderr)


class BrowserTest(unittest.TestCase):
    """A page load with the stand-in configured, and the checks every test ends with."""

    shop = None  # the sandbox shop unless a test says otherwise
    # Console entries a test expects (a fault it injected on purpose): substrings of the message.
    expected_console = ()

    def setUp(self):
        self.driver = Suite.driver
        self.driver.get_log("browser")  # drop what an earlier test left
        self.expected_console = []

    def tearDown(self):
        try:
            self.assert_clean_console()
        finally:
            self.driver.get("about:blank")
            for shop in (Suite.shop, Suite.stripe_shop):
                shop.proxy.clear()

    # ---- the page

    def open(self, shop=None, width=harness.DESKTOP, **standin):
        """Loads the shop's page with the stand-in configured (`available`, `maxVersion`, ...)."""
        self.shop = shop or Suite.shop
        config = {"validationURL": Suite.apple.announcement["validationURL"]}
        config.update(standin)
        source = "window.__applePayConfig = %s;\n%s" % (
            json.dumps(config), open(os.path.join(harness.HERE, "applepay-standin.js"), encoding="utf-8").read())
        if Suite.script_id is not None:
            self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": Suite.script_id})
        Suite.script_id = self.driver.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument", {"source": source})["identifier"]
        self.driver.set_window_size(*width)
        self.driver.get(self.shop.url)
        wait_for(lambda: all(e.text not in ("", "…") for e in self.driver.find_elements(By.CSS_SELECTOR, ".product .price")),
                 20, "the products' prices")
        self.orders_before = {o["orderId"] for o in self.shop.orders()}

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def sheet(self, action, *args):
        """A shopper's action on the sheet (the stand-in's control API), then waits until the page
        has completed the event it caused."""
        self.js("window.__applePay.%s(...arguments)" % action, *args)
        wait_for(lambda: self.js("return window.__applePay.pending()") is None, 35, "the page to complete %s" % action)

    def state(self):
        return self.js("return window.__applePay.state()")

    def add(self, sku, quantity=1):
        for _ in range(quantity):
            self.driver.find_element(By.CSS_SELECTOR, '.product[data-sku="%s"] button[aria-label^="One more"]' % sku).click()
        self.wait_priced()

    def wait_priced(self):
        wait_for(lambda: self.js("return !document.getElementById('summary').classList.contains('updating')"
                                 " && document.querySelector('#summary tr.total') !== null"),
                 20, "the summary")

    def summary(self):
        """The summary table's rows as [label (with its note), amount]."""
        return self.js("""return [...document.querySelectorAll('#summary tr')].map(
            (tr) => [tr.cells[0].innerText.replace(/\\n+/g, ' | '), tr.cells[1].innerText]);""")

    def message(self):
        return self.driver.find_element(By.ID, "message").text

    def text_of(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def pay_button(self):
        return self.driver.find_element(By.ID, "pay")

    def click_pay(self):
        self.pay_button().click()

    def begin(self):
        """Clicks the Apple Pay button and waits for the sheet to be open (merchant validated)."""
        self.click_pay()
        wait_for(lambda: self.state() == "open", 20, "the sheet to open (state %r)" % self.state())

    def new_orders(self):
        return [o for o in self.shop.orders() if o["orderId"] not in self.orders_before]

    def receipt(self):
        try:
            wait_for(lambda: self.driver.find_element(By.ID, "receipt").is_displayed(), 60, "the receipt")
        except AssertionError:
            raise AssertionError("no receipt; the page says %r; the sheet is %s; its log: %s; console: %s" % (
                self.message(), self.state(), json.dumps(self.js("return window.__applePay.log()")),
                self.driver.get_log("browser")))
        return {
            "order": self.text_of("receipt-order"), "total": self.text_of("receipt-total"),
            "lines": [li.text for li in self.driver.find_elements(By.CSS_SELECTOR, "#receipt-lines li")],
            "next": self.text_of("receipt-next"),
        }

    def screenshot(self, name):
        """The whole page (not only the window) as PNG, through the DevTools protocol."""
        import base64

        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        with open(os.path.join(Suite.screenshots, name + ".png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def buy(self, payment_data="tok_visa", contact=ADA, billing=ADA_BILLING, card=VISA):
        """The sheet's usual path: the shipping contact, then authorize."""
        self.begin()
        self.sheet("selectShippingContact", contact)
        self.sheet("authorize", payment(payment_data, card, contact, billing))

    # ---- what every test ends with

    def assert_clean_console(self):
        entries = self.driver.get_log("browser")
        bad = [e for e in entries if e["level"] == "SEVERE"
               and not any(expected in e["message"] for expected in self.expected_console)]
        self.assertEqual(bad, [], "console errors on the page")
        if self.js("return typeof window.__applePay === 'object'"):
            self.assertEqual(self.js("return window.__applePay.violations()"), [], "Apple Pay JS misuse")


class Purchases(BrowserTest):
    def test_one_off_purchase_with_screenshots_at_desktop_and_phone_width(self):
        for width, name in ((harness.DESKTOP, "desktop"), (harness.PHONE, "phone")):
            with self.subTest(width=name):
                self.open(width=width)
                self.add("grinder")
                self.assertEqual(self.summary(), [
                    ["Burr Grinder", "$89.00"], ["Shipping", "$0.00"], ["Tax", "$7.12"], [TOTAL, "$96.12"]])
                # Nothing wider than the screen, no text under 16 px in a field (iOS would zoom).
                self.assertLessEqual(self.js("return document.documentElement.scrollWidth"), width[0])
                self.assertEqual(self.js("""return [...document.querySelectorAll('input')].filter(
                    (i) => parseFloat(getComputedStyle(i).fontSize) < 16).length"""), 0)
                self.screenshot("%s-before" % name)
                self.buy()
                receipt = self.receipt()
                self.screenshot("%s-after" % name)
                orders = self.new_orders()
                self.assertEqual(len(orders), 1)
                self.assertEqual(receipt["order"], orders[0]["orderId"])
                self.assertEqual(receipt["total"], "$95.45")
                self.assertEqual(orders[0]["amount"], "95.45")
                self.assertEqual(receipt["lines"], ["1 × Burr Grinder: $89.00"])
                self.assertEqual(receipt["next"], "We’ll email ada@example.com when your order ships.")
                self.assertEqual(self.state(), "completed")
                # The cart is empty and the button gone.
                self.assertEqual(self.js("return [...document.querySelectorAll('input[data-sku]')].map((i) => i.value)"),
                                 ["0", "0", "0", "0"])
                self.assertFalse(self.driver.find_element(By.ID, "shop").is_displayed())
                self.driver.find_element(By.ID, "continue").click()
                self.assertFalse(self.pay_button().is_displayed())
                self.assertEqual(self.text_of("empty-cart"), "Your cart is empty.")
        # The page's icon is inline: the browser asks the bridge for no /favicon.ico.
        self.assertNotIn(b"favicon", open(self.shop.log_path, "rb").read())

    def test_every_product_shows_payservices_price_and_terms(self):
        self.open()
        rows = self.js("""return [...document.querySelectorAll('.product')].map(
            (p) => [p.dataset.sku, p.querySelector('.price').textContent, p.querySelector('.terms').textContent]);""")
        self.assertEqual(rows, [
            ["grinder", "$89.00", ""],
            ["beans-club", "$18.00 every month", "Starts with a 14-day trial for $5.00."],
            ["cafe-card", "$25.00 top-up", "Topped up again whenever the balance falls below $5.00."],
            ["espresso-machine", "$499.00", "Nothing to pay today: charged on Feb 1, 2027."],
        ])

    def test_subscription_with_a_trial(self):
        self.open()
        self.add("beans-club")
        self.assertEqual(self.summary()[:2], [
            ["Beans Club trial | Once, today: a 14-day trial, until Dec 4, 2026.", "$5.00"],
            ["Beans Club | Then every month, from Dec 4, 2026, until you cancel.", "$18.00"]])
        self.buy()
        receipt = self.receipt()
        orders = self.new_orders()
        self.assertEqual([o["amount"] for o in orders], ["5.36"])
        self.assertEqual(receipt["total"], "$5.36")
        self.assertEqual(receipt["lines"], ["1 × Beans Club: $5.00"])
        self.assertEqual(receipt["next"], (
            "Your subscription continues at $18.00 every month from Dec 4, 2026, until you cancel. "
            "Manage it from your account page. We’ll email ada@example.com when your order ships."))
        request = self.js("return window.__applePay.sheet().request")
        self.assertEqual(request["recurringPaymentRequest"]["trialBilling"]["amount"], "5.00")

    def test_automatic_reload(self):
        self.open()
        self.add("cafe-card")
        self.assertEqual(self.summary()[0], [
            "Café Card | Today, and again whenever the balance falls below $5.00.", "$25.00"])
        self.buy()
        receipt = self.receipt()
        self.assertEqual([o["amount"] for o in self.new_orders()], ["26.81"])
        self.assertEqual(receipt["total"], "$26.81")
        self.assertEqual(receipt["next"], (
            "Your card is topped up with $25.00 whenever its balance falls below $5.00. "
            "Manage it from your account page. We’ll email ada@example.com when your order ships."))

    def test_pre_order(self):
        self.open()
        self.add("espresso-machine")
        self.assertEqual(self.summary(), [
            ["Espresso Machine (pre-order) | Charged on Feb 1, 2027, not today. Free cancellation until Jan 25, 2027.",
             "$499.00"],
            ["Shipping", "$0.00"], ["Tax", "$0.00"], [TOTAL, "$0.00"]])
        self.buy()
        receipt = self.receipt()
        self.assertEqual([o["amount"] for o in self.new_orders()], ["0.00"])
        self.assertEqual(receipt["total"], "$0.00")
        self.assertEqual(receipt["next"], (
            "$499.00 will be charged on Feb 1, 2027, when it ships. You can cancel free of charge until Jan 25, 2027. "
            "Manage it from your account page. We’ll email ada@example.com when your order ships."))

    def test_real_apple_pay_token_through_stripe(self):
        """The token as Apple Pay JS hands it over (paymentData the EC_v1 object) with
        gateway.kind: stripe: payservice has Stripe make a tok_ of it and charges that."""
        vector = os.path.join(harness.ROOT, "Tests/PayServiceCoreTests/Fixtures/applepay-ec-v1/token.json")
        payment_data = json.load(open(vector))
        before = Suite.stripe.command("count", answer=True)
        # The Stripe shop's config has no pre-order (harness.shop_config): the page's price of it is refused.
        self.expected_console.append("/rpc - Failed to load resource: the server responded with a status of 400")
        self.open(shop=Suite.stripe_shop)
        self.add("grinder")
        self.buy(payment_data=payment_data)
        receipt = self.receipt()
        orders = self.new_orders()
        self.assertEqual([o["amount"] for o in orders], ["95.45"])
        self.assertEqual(receipt["order"], orders[0]["orderId"])
        self.assertEqual(orders[0]["status"], "paid")
        after = Suite.stripe.command("count", answer=True)
        # One Stripe token made of the Apple Pay token (pk_token), one PaymentIntent charging it.
        self.assertEqual((after["tokens"], after["paymentIntents"]), (before["tokens"] + 1, before["paymentIntents"] + 1))


class SheetEvents(BrowserTest):
    def test_every_sheet_event_reprices_the_sheet_and_the_charge(self):
        self.open()
        self.add("grinder")
        self.begin()
        self.sheet("selectShippingContact", NEW_YORK)
        self.assertEqual(self.js("return window.__applePay.sheet().total.amount"), "96.12")
        self.sheet("selectShippingMethod", "express")
        self.assertEqual(self.js("return window.__applePay.sheet().total.amount"), "110.12")
        self.sheet("selectPaymentMethod", {"displayName": "Amex 1005", "network": "AmEx", "type": "credit"})
        self.assertEqual(self.js("return window.__applePay.sheet().total.amount"), "110.12")
        self.sheet("changeCouponCode", "NOPE")
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [
            {"code": "couponCodeInvalid", "contactField": None, "message": "This coupon code isn't valid."}])
        self.sheet("changeCouponCode", "FIRSTCUP")
        sheet = self.js("return window.__applePay.sheet()")
        self.assertEqual(sheet["total"]["amount"], "100.51")
        self.assertEqual([[i["label"], i["amount"]] for i in sheet["lineItems"]], [
            ["Burr Grinder", "89.00"], ["First cup", "-8.90"], ["Shipping", "14.00"], ["Tax", "6.41"]])
        self.sheet("authorize", payment("tok_amex", {"displayName": "Amex 1005", "network": "AmEx", "type": "credit"}, NEW_YORK))
        receipt = self.receipt()
        self.assertEqual(receipt["total"], "$100.51")
        self.assertEqual([o["amount"] for o in self.new_orders()], ["100.51"])
        events = [e["name"] for e in self.js("return window.__applePay.log()") if e["kind"] == "event" and not e["name"].startswith("shopper:")]
        self.assertEqual(events, ["validatemerchant", "shippingcontactselected", "shippingmethodselected",
                                  "paymentmethodselected", "couponcodechanged", "couponcodechanged", "paymentauthorized"])

    def test_refused_card_is_refused_on_the_sheet_at_version_14(self):
        """The session opens at the highest version the device supports (14 here, while a one-off
        cart needs less), so the payment method update carries payservice's refusal of the card:
        the sheet shows it while the shopper can still pick another card."""
        self.open()
        self.add("grinder")
        self.begin()
        self.assertEqual(self.js("return window.__applePay.sheet().version"), 14)
        self.sheet("selectShippingContact", ADA)
        self.sheet("selectPaymentMethod", JCB)
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [
            {"code": "unknown", "contactField": None, "message": CARD_REFUSED}])
        self.assertEqual(self.state(), "open")
        self.assertEqual(self.js("return window.__applePay.sheet().total.amount"), "95.45")
        self.sheet("selectPaymentMethod", VISA)
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [])
        self.sheet("authorize", payment())
        self.assertEqual(self.receipt()["total"], "$95.45")
        self.assertEqual([o["amount"] for o in self.new_orders()], ["95.45"])

    def test_refused_card_below_version_14_is_refused_when_the_sheet_closes(self):
        """A device whose Apple Pay stops at 13: the session opens at 13, where a payment method
        update has no errors, so the refusal comes with completePayment, which closes the sheet."""
        self.open(maxVersion=13)
        self.add("grinder")
        self.begin()
        self.assertEqual(self.js("return window.__applePay.sheet().version"), 13)
        self.sheet("selectShippingContact", ADA)
        self.sheet("selectPaymentMethod", JCB)
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [])
        self.sheet("authorize", payment("tok_jcb", JCB))
        wait_for(lambda: self.message() == CARD_REFUSED, 10, "the refusal on the page")
        self.assertEqual(self.state(), "completed")
        self.assertEqual(self.js("return window.__applePay.sheet().lastPaymentStatus"), 1)
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [
            {"code": "unknown", "contactField": None, "message": CARD_REFUSED}])
        self.assertEqual(self.new_orders(), [])

    def test_cancelled_sheet_charges_nothing_and_can_begin_again(self):
        self.open()
        self.add("grinder")
        self.begin()
        self.js("window.__applePay.cancel()")
        wait_for(lambda: self.message() == "Payment cancelled. You have not been charged.", 10, "the cancel message")
        self.assertEqual(self.new_orders(), [])
        self.wait_priced()
        self.begin()
        self.assertEqual(self.js("return window.__applePay.sessions()"), 2)
        self.js("window.__applePay.cancel()")

    def test_invalid_address_is_shown_in_the_sheet_and_can_be_fixed(self):
        self.open()
        self.add("grinder")
        self.begin()
        bad = dict(ADA, postalCode="1234")
        self.sheet("selectShippingContact", bad)
        zip_error = {"code": "shippingContactInvalid", "contactField": "postalCode",
                     "message": "Enter a 5-digit ZIP code or ZIP+4, like 95014 or 95014-2083."}
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [zip_error])
        self.sheet("authorize", payment(contact=bad))
        self.assertEqual(self.js("return window.__applePay.sheet().lastPaymentStatus"), 1)
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [zip_error])
        self.assertEqual(self.state(), "open")
        self.assertEqual(self.message(), zip_error["message"])
        self.assertEqual(self.new_orders(), [])
        self.sheet("selectShippingContact", ADA)
        self.sheet("authorize", payment())
        self.assertEqual(self.receipt()["total"], "$95.45")
        self.assertEqual(len(self.new_orders()), 1)

    def test_declined_card_then_another_card(self):
        self.open()
        self.add("grinder")
        self.buy(payment_data="tok_visa_chargeDeclined")
        wait_for(lambda: self.message() == "Your card was declined. Try another card.", 10, "the decline message")
        # A failure with an `unknown` error is final: the sheet shows it and closes.
        self.assertEqual(self.state(), "completed")
        self.assertEqual(self.js("return window.__applePay.sheet().lastPaymentStatus"), 1)
        self.assertEqual(self.js("return window.__applePay.sheet().errors"), [
            {"code": "unknown", "contactField": None, "message": "Your card was declined. Try another card."}])
        self.assertFalse(self.driver.find_element(By.ID, "receipt").is_displayed())
        self.wait_priced()
        self.buy(payment_data="tok_mastercard",
                 card={"displayName": "MasterCard 4444", "network": "MasterCard", "type": "credit"})
        self.assertEqual(self.receipt()["total"], "$95.45")
        paid = [o for o in self.new_orders() if o["status"] == "paid"]
        self.assertEqual([o["amount"] for o in paid], ["95.45"])

    def test_merchant_validation_failure_is_told_to_the_shopper_in_their_words(self):
        self.open()
        self.add("grinder")
        Suite.apple.command("fault 500")
        self.click_pay()
        wait_for(lambda: self.state() == "aborted", 20, "the sheet to be aborted")
        self.assertEqual(self.message(), "Apple Pay isn’t available for this shop right now. Please try again later.")
        page = self.driver.find_element(By.TAG_NAME, "body").text
        for developer_word in ("payservice", "applePay.", "merchantIdentity", "-326", "Invalid params"):
            self.assertNotIn(developer_word, page)


class LostAndLateAnswers(BrowserTest):
    def watch_messages(self):
        self.js("""window.__messages = [];
            new MutationObserver(() => window.__messages.push(document.getElementById('message').textContent))
              .observe(document.getElementById('message'), {childList: true, characterData: true, subtree: true});""")

    def test_lost_processOrder_answer_is_asked_again_inside_the_sheet(self):
        self.open()
        self.add("grinder")
        Suite.shop.proxy.queue("processOrder", "lose")
        self.expected_console.append("/rpc")
        calls_before = len(Suite.shop.proxy.params_of("processOrder"))
        self.buy()
        receipt = self.receipt()
        self.assertEqual(self.state(), "completed")
        orders = self.new_orders()
        self.assertEqual(len(orders), 1)
        self.assertEqual(receipt["order"], orders[0]["orderId"])
        sent = Suite.shop.proxy.params_of("processOrder")[calls_before:]
        self.assertEqual(len(sent), 2)
        self.assertEqual(sent[0], sent[1])

    def authorize_held(self):
        """The usual sheet up to authorize, which is not waited for; the moment of authorize."""
        self.begin()
        self.sheet("selectShippingContact", ADA)
        started = time.monotonic()
        self.js("window.__applePay.authorize(arguments[0])", payment())
        return started

    def completions(self):
        return [(e["name"], e["detail"]) for e in self.js("return window.__applePay.log()")
                if e["kind"] in ("completion", "abort", "timeout", "cancel") and e["name"] != "completeMerchantValidation"]

    def held_answer_is_asked_again_and_the_sheet_ends_in_success(self, seconds):
        """The first processOrder's answer is held `seconds` on its way to the page (payservice
        charged and stored the outcome at once). The page cuts that attempt off after 4 s and sends
        the same request again, whose answer is not held: the stored outcome, no second charge. The
        sheet ends with STATUS_SUCCESS and the receipt, well inside the sheet's budget."""
        self.open()
        self.add("grinder")
        self.watch_messages()
        Suite.shop.proxy.queue("processOrder", "delay", seconds)
        calls_before = len(Suite.shop.proxy.params_of("processOrder"))
        started = self.authorize_held()
        receipt = self.receipt()
        elapsed = time.monotonic() - started
        # Before the held answer could have come, and inside the 24 s budget.
        self.assertLess(elapsed, min(seconds, 24) - 1)
        self.assertEqual(self.state(), "completed")
        self.assertEqual(self.js("return window.__applePay.sheet().lastPaymentStatus"), 0)
        completions = self.completions()
        self.assertEqual([name for name, _ in completions], [
            "completeShippingContactSelection", "completePayment"], completions)
        self.assertEqual(completions[-1][1]["result"]["status"], 0)
        orders = self.new_orders()
        self.assertEqual(len(orders), 1)
        self.assertEqual(orders[0]["status"], "paid")
        self.assertEqual(receipt["order"], orders[0]["orderId"])
        self.assertEqual(receipt["total"], "$95.45")
        # Two attempts, the same request: the same charge token, amount and everything else.
        sent = Suite.shop.proxy.params_of("processOrder")[calls_before:]
        self.assertEqual(len(sent), 2, sent)
        self.assertEqual(sent[0], sent[1])
        messages = self.js("return window.__messages")
        self.assertFalse([m for m in messages if "checking" in m.lower() or "cancel" in m.lower()], messages)

    def test_processOrder_answer_held_10_s_ends_the_sheet_in_success(self):
        self.held_answer_is_asked_again_and_the_sheet_ends_in_success(10)

    def test_processOrder_answer_held_30_s_ends_the_sheet_in_success(self):
        """The issue's case: an answer held past the sheet's 30 s used to keep the page waiting until
        the budget was spent, then abort the sheet of an order that was paid."""
        self.held_answer_is_asked_again_and_the_sheet_ends_in_success(30)

    def test_every_answer_held_past_the_budget_closes_the_sheet_honestly_then_tells_the_outcome(self):
        """Only when no attempt's answer comes within the budget (24 s after authorize) does the page
        give up on the sheet: it must not say "cancelled" while the shopper is charged. It closes the
        sheet itself, says it is checking, and asks again with the same processOrder until it knows."""
        self.open()
        self.add("grinder")
        self.watch_messages()
        calls_before = len(Suite.shop.proxy.params_of("processOrder"))
        self.begin()
        self.sheet("selectShippingContact", ADA)
        # Every answer held until 28 s after authorize: past the budget, then the link recovers.
        Suite.shop.proxy.hold("processOrder", 28)
        started = time.monotonic()
        self.js("window.__applePay.authorize(arguments[0])", payment())
        wait_for(lambda: self.message().startswith("We’re checking your payment"), 35, "the checking message")
        self.assertLess(time.monotonic() - started, 30)
        self.assertGreater(time.monotonic() - started, 20)
        self.assertEqual(self.state(), "aborted")
        receipt = self.receipt()
        orders = self.new_orders()
        self.assertEqual(len(orders), 1)
        self.assertEqual(receipt["order"], orders[0]["orderId"])
        kinds = [e["kind"] for e in self.js("return window.__applePay.log()")]
        self.assertNotIn("timeout", kinds)
        self.assertNotIn("cancel", kinds)
        messages = self.js("return window.__messages")
        self.assertFalse([m for m in messages if "cancel" in m.lower()], messages)
        self.assertIn("We’re checking your payment. Please keep this page open: you will not be charged twice.", messages)
        # Several attempts inside the sheet and after it, every one the same request.
        sent = Suite.shop.proxy.params_of("processOrder")[calls_before:]
        self.assertGreaterEqual(len(sent), 5, len(sent))
        self.assertTrue(all(params == sent[0] for params in sent))


class Coupons(BrowserTest):
    def apply_coupon(self, code):
        field = self.driver.find_element(By.ID, "coupon")
        field.clear()
        field.send_keys(code)
        self.driver.find_element(By.ID, "coupon-apply").click()
        wait_for(lambda: self.text_of("coupon-status") not in ("", "Checking…"), 10, "the coupon's answer")
        self.wait_priced()

    def test_refused_coupon_is_shown_on_the_page_and_never_sent_to_the_sheet(self):
        self.open()
        self.add("grinder")
        calls_before = len(Suite.shop.proxy.calls)
        self.apply_coupon("nope")
        self.assertEqual(self.text_of("coupon-status"), "NOPE: This coupon code isn't valid.")
        self.assertEqual(self.summary()[-1], [TOTAL, "$96.12"])
        self.buy()
        self.assertEqual(self.receipt()["total"], "$95.45")
        sheet = self.js("return window.__applePay.sheet()")
        self.assertNotIn("couponCode", sheet["request"])
        after_check = Suite.shop.proxy.calls[calls_before + 1:]
        self.assertTrue(after_check)
        for method, params in after_check:
            self.assertNotIn("couponCode", params, method)

    def test_accepted_coupon_goes_into_the_sheets_own_field(self):
        self.open()
        self.add("grinder")
        self.apply_coupon("firstcup")
        self.assertEqual(self.text_of("coupon-status"), "FIRSTCUP applied: First cup -$8.90.")
        self.assertEqual(self.summary()[1], ["First cup", "-$8.90"])
        self.begin()
        sheet = self.js("return window.__applePay.sheet()")
        self.assertEqual(sheet["request"]["couponCode"], "FIRSTCUP")
        self.assertEqual(sheet["request"]["supportsCouponCode"], True)
        self.sheet("selectShippingContact", ADA)
        self.sheet("authorize", payment())
        self.assertEqual(self.receipt()["total"], "$85.91")
        self.assertEqual([o["amount"] for o in self.new_orders()], ["85.91"])

    def test_coupon_removed_in_the_sheet_is_not_charged(self):
        self.open()
        self.add("grinder")
        self.apply_coupon("FIRSTCUP")
        self.begin()
        self.sheet("changeCouponCode", "")
        self.sheet("selectShippingContact", ADA)
        self.assertEqual(self.js("return window.__applePay.sheet().total.amount"), "95.45")
        self.sheet("authorize", payment())
        self.assertEqual(self.receipt()["total"], "$95.45")


class Availability(BrowserTest):
    def test_no_apple_pay(self):
        self.open(available=False)
        self.add("grinder")
        self.assertFalse(self.pay_button().is_displayed())
        self.assertEqual(self.message(), (
            "Apple Pay isn’t available in this browser. Open this page in Safari on an iPhone, iPad or Mac "
            "with Apple Pay set up."))
        self.assertEqual(self.summary()[-1], [TOTAL, "$96.12"])

    def test_old_apple_pay_version(self):
        self.open(maxVersion=12)
        self.add("beans-club")
        self.assertFalse(self.pay_button().is_displayed())
        self.assertEqual(self.message(), (
            "Apple Pay on this device is too old for this order. Update the device, or buy one-off items on their own."))
        self.driver.find_element(By.CSS_SELECTOR, '.product[data-sku="beans-club"] button[aria-label^="One less"]').click()
        self.add("grinder")
        self.assertTrue(self.pay_button().is_displayed())
        self.assertEqual(self.message(), "")
        self.buy()
        self.assertEqual(self.receipt()["total"], "$95.45")
        self.assertEqual(self.js("return window.__applePay.sheet().version"), 12)

    def test_double_click_opens_one_sheet(self):
        from selenium.webdriver.common.action_chains import ActionChains

        self.open()
        self.add("grinder")
        ActionChains(self.driver).double_click(self.pay_button()).perform()
        wait_for(lambda: self.state() == "open", 20, "the sheet to open")
        self.assertEqual(self.js("return window.__applePay.sessions()"), 1)
        self.js("window.__applePay.cancel()")

    def test_click_while_the_price_updates_says_so_until_the_price_arrives(self):
        self.open()
        self.add("grinder")
        # The new price is held 3 s: the click lands while it updates, however slow the machine
        # running the suite (without it, 250 ms of debounce and a fast answer leave the click and the
        # check less time than a loaded machine takes).
        Suite.shop.proxy.queue("createPaymentRequest", "delay", 3)
        self.driver.find_element(By.CSS_SELECTOR, '.product[data-sku="grinder"] button[aria-label^="One more"]').click()
        self.click_pay()
        self.assertEqual(self.message(), "One moment: the price is being updated.")
        self.wait_priced()
        wait_for(lambda: self.message() == "", 10, "the message to clear")
        self.assertEqual(self.summary()[-1], [TOTAL, "$192.24"])
        self.assertEqual(self.js("return window.__applePay.sessions()"), 0)

    def test_plans_that_cannot_share_a_payment_request(self):
        self.open()
        self.add("beans-club")
        self.driver.find_element(By.CSS_SELECTOR, '.product[data-sku="cafe-card"] button[aria-label^="One more"]').click()
        wait_for(lambda: self.message() != "", 10, "the message")
        self.assertEqual(self.message(), (
            "A subscription, a Café Card and a pre-order each need a checkout of their own: buy them one at a time."))
        self.assertFalse(self.pay_button().is_displayed())


if __name__ == "__main__":
    unittest.main(verbosity=2)

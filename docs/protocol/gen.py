import json,sys
def c(o): return json.dumps(o,separators=(',',':'),ensure_ascii=False)
SHIP={"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}
BILL={"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}
def auth(id,pd="tok_visa",items=[{"sku":"clock"}],method="express",ship=SHIP,bill=BILL,network="visa",typ="credit"):
    p={"token":{"paymentData":pd,"paymentMethod":{"displayName":"Visa 1234","network":network,"type":typ},"transactionIdentifier":"txn-%s"%id}}
    if ship is not None: p["shippingContact"]=ship
    if bill is not None: p["billingContact"]=bill
    return c({"jsonrpc":"2.0","id":id,"method":"authorizePayment","params":{"items":items,"shippingMethod":method,"payment":p}})
def order(id,tok,amount="66.13",items=[{"sku":"clock"}],method="express",ship=SHIP,bill=None,cur="USD"):
    p={"chargeToken":tok,"items":items,"shippingMethod":method,"shippingContact":ship}
    if bill is not None: p["billingContact"]=bill
    p["amount"]=amount; p["currencyCode"]=cur
    return c({"jsonrpc":"2.0","id":id,"method":"processOrder","params":p})

import Foundation

/// What the Adyen test server knows: payments, their modifications, stored payment methods and
/// disputes, with the notifications they queue. Not thread-safe by itself: the server keeps it
/// behind a lock. Payments are here; modifications, settlements, later failures and disputes are in
/// AdyenTestLedger+Modifications.swift.
///
/// References are deterministic per server: every pspReference (payments, modifications,
/// disputes, and the errors that carry one) is `TEST` and a 12-digit counter, in the order they are
/// made (`TEST000000000001`); stored payment method ids are `TOKN` and their own counter. Every
/// time (`eventDate`, the day a card expires against) comes from `now`: the settable clock, or the
/// wall clock.
struct AdyenTestLedger: Sendable {
  struct Payment: Sendable {
    var pspReference: String
    var reference: String
    var amount: AdyenAmount
    /// `Authorised`, `Refused`, `Error` or `Received`.
    var resultCode: String
    var refusal: AdyenRefusal?
    var card: AdyenTestCard
    /// `paymentMethod.type` of the request: `applepay` or `scheme`.
    var methodType: String
    var manualCapture: Bool
    /// What a capture may still take (manual capture, until captured or cancelled).
    var capturable: Int64 = 0
    var captured: Int64 = 0
    var refunded: Int64 = 0
    var cancelled = false
    var chargedBack: Int64 = 0
    var storePaymentMethod: Bool
    var shopperReference: String?
    /// The stored payment method the payment used, or the one it stored.
    var storedPaymentMethodId: String?
    var recurringProcessingModel: String?
    var shopperInteraction: String?
    var authCode: String
    var idempotencyKey: String?
  }

  struct StoredMethod: Sendable {
    var id: String
    var shopperReference: String
    var card: AdyenTestCard
    var recurringProcessingModel: String?
    var disabled = false
    /// Refusals the next payments with the method get, in order (`refuseStoredPayments`).
    var refusals: [AdyenRefusal] = []
  }

  /// A payment request after validation.
  struct PaymentInput: Sendable {
    var amount: AdyenAmount
    var reference: String
    var methodType: String
    var applePayToken: String?
    var storedPaymentMethodId: String?
    var manualCapture: Bool
    var storePaymentMethod: Bool
    var shopperReference: String?
    var recurringProcessingModel: String?
    var shopperInteraction: String?
  }

  let merchantAccount: String
  let applePay: AdyenApplePayDecryption
  var clock: Int64?
  var now: Int64 { clock ?? Int64(Date().timeIntervalSince1970) }
  var referenceCounter = 0
  var storedCounter = 0
  var payments: [String: Payment] = [:]
  var paymentOrder: [String] = []
  var modifications: [String: Modification] = [:]
  var modificationOrder: [String] = []
  var storedMethods: [String: StoredMethod] = [:]
  var storedOrder: [String] = []
  var disputes: [String: Dispute] = [:]
  /// Notifications not yet released, oldest first.
  var queued: [AdyenNotificationItem] = []
  /// Payments and modifications made (executed, not replayed) per Idempotency-Key.
  var createdPerIdempotencyKey: [String: Int] = [:]
  /// The optional `additionalData` fields answered for a payment (`AdyenTestServer.setAdditionalData`).
  var additionalDataFields: Set<String> = []

  init(merchantAccount: String, applePay: AdyenApplePayDecryption) {
    self.merchantAccount = merchantAccount
    self.applePay = applePay
  }

  mutating func nextPSPReference() -> String {
    referenceCounter += 1
    return "TEST" + Self.pad(referenceCounter, 12)
  }

  static func pad(_ number: Int, _ width: Int) -> String {
    let text = String(number)
    return String(repeating: "0", count: max(0, width - text.count)) + text
  }

  /// `PaymentRequest` fields whose values Adyen restricts (CheckoutService-v71.json).
  static let recurringProcessingModels: Set<String> = ["CardOnFile", "Subscription", "UnscheduledCardOnFile"]
  static let shopperInteractions: Set<String> = ["Ecommerce", "ContAuth", "Moto", "POS"]

  /// The optional fields of a payment's `additionalData`, which Adyen answers only when the
  /// merchant selected them in its Customer Area ("Developers > Additional data"; the
  /// `ResponseAdditionalDataCommon` and `…Card` schemas): `authCode`, `cardBin`, `cardSummary`
  /// (the last four digits), `expiryDate` (`M/YYYY`), `paymentMethod` (the brand) and
  /// `recurringProcessingModel`.
  static let optionalAdditionalData: Set<String> = [
    "authCode", "cardBin", "cardSummary", "expiryDate", "paymentMethod", "recurringProcessingModel",
  ]

  // MARK: - Validation (nothing executed: not saved under an Idempotency-Key)

  func validatePayment(_ body: AdyenJSON) -> Result<PaymentInput, AdyenServiceError> {
    guard body["merchantAccount"]?.string == merchantAccount else { return .failure(.invalidMerchantAccount) }
    let amount: AdyenAmount
    switch AdyenAmount.read(body["amount"], minimum: 0) {
    case .success(let read): amount = read
    case .failure(let error): return .failure(error)
    }
    guard let reference = body["reference"]?.string, !reference.isEmpty else {
      return .failure(.validation("130", "Required field 'reference' is not provided.", nil))
    }
    guard let method = body["paymentMethod"], method.members != nil else {
      return .failure(.validation("702", "Required object 'paymentMethod' is not provided", nil))
    }
    let additional = body["additionalData"]
    if let additional, additional.members?.allSatisfy({ $0.1.string != nil }) != true {
      return .failure(.unexpectedInput("Unexpected input: additionalData values must be strings"))
    }
    for (field, allowed) in [
      ("recurringProcessingModel", Self.recurringProcessingModels), ("shopperInteraction", Self.shopperInteractions),
    ] {
      if let value = body[field], value.string.map(allowed.contains) != true {
        return .failure(.unexpectedInput("Unexpected input: \(value.rendered) is not a valid \(field)"))
      }
    }
    if let store = body["storePaymentMethod"], store.bool == nil {
      return .failure(.unexpectedInput("Unexpected input: \(store.rendered) is not a valid storePaymentMethod"))
    }
    let type = method["type"]?.string ?? "scheme"
    let storedID = method["storedPaymentMethodId"]?.string
    let token = method["applePayToken"]?.string
    let unsupported = AdyenServiceError(
      status: 500, errorCode: "905", message: "Payment details are not supported", errorType: "configuration")
    switch type {
    case "applepay" where token == nil && storedID == nil:
      return .failure(.validation("5_002", "Invalid Apple Pay token", nil))
    case "applepay": break
    case "scheme" where storedID != nil: break
    default: return .failure(unsupported)
    }
    return .success(
      PaymentInput(
        amount: amount, reference: reference, methodType: type, applePayToken: storedID == nil ? token : nil,
        storedPaymentMethodId: storedID, manualCapture: additional?["manualCapture"]?.string == "true",
        storePaymentMethod: body["storePaymentMethod"]?.bool ?? false,
        shopperReference: body["shopperReference"]?.string,
        recurringProcessingModel: body["recurringProcessingModel"]?.string,
        shopperInteraction: body["shopperInteraction"]?.string))
  }

  // MARK: - Payments

  /// `POST /payments`: decrypts the Apple Pay token or finds the stored method, decides the outcome
  /// and queues the AUTHORISATION notification (not for `Received`, which `settle` ends).
  mutating func createPayment(_ input: PaymentInput, idempotencyKey: String?) -> Result<AdyenJSON, AdyenServiceError> {
    let card: AdyenTestCard
    var forced: AdyenRefusal?
    if let storedID = input.storedPaymentMethodId {
      // "Contract not found": Adyen's code 800 for stored details it does not have for the shopper.
      guard let method = storedMethods[storedID], !method.disabled, method.shopperReference == input.shopperReference
      else { return .failure(.validation("800", "Contract not found", nextPSPReference())) }
      card = method.card
      if !method.refusals.isEmpty { forced = storedMethods[storedID]!.refusals.removeFirst() }
    } else {
      switch applePay.decrypt(applePayToken: input.applePayToken ?? "") {
      case .failure(.invalidToken): return .failure(.validation("5_002", "Invalid Apple Pay token", nextPSPReference()))
      case .failure(.unknownMerchantKey):
        return .failure(.validation("5_004", "Could not find Merchant Private Key", nextPSPReference()))
      case .success(let payment):
        guard
          AdyenCurrency.tokenMatches(
            currencyCode: payment.currencyCode, transactionAmount: payment.transactionAmount,
            currency: input.amount.currency, value: input.amount.value)
        else { return .failure(.validation("5_001", "Apple Pay token amount-mismatch", nextPSPReference())) }
        card = payment.card
      }
    }
    let psp = nextPSPReference()
    let outcome = forced.map { AdyenTestCard.Outcome.refused($0) } ?? card.outcome(onDay: AdyenClock.day(now))
    var payment = Payment(
      pspReference: psp, reference: input.reference, amount: input.amount, resultCode: "Received", refusal: nil,
      card: card, methodType: input.methodType, manualCapture: input.manualCapture,
      storePaymentMethod: input.storePaymentMethod, shopperReference: input.shopperReference,
      storedPaymentMethodId: input.storedPaymentMethodId, recurringProcessingModel: input.recurringProcessingModel,
      shopperInteraction: input.shopperInteraction, authCode: String(100_000 + referenceCounter % 900_000),
      idempotencyKey: idempotencyKey)
    var tokenization: [String: String] = [:]
    switch outcome {
    case .authorised: tokenization = authorise(&payment)
    case .refused(let refusal):
      payment.resultCode = refusal.resultCode
      payment.refusal = refusal
    case .received: break
    }
    payments[psp] = payment
    paymentOrder.append(psp)
    if let idempotencyKey { createdPerIdempotencyKey[idempotencyKey, default: 0] += 1 }
    if payment.resultCode != "Received" { queueAuthorisation(payment, tokenization: tokenization) }
    return .success(paymentResponse(payment, tokenization: tokenization))
  }

  /// Makes `payment` Authorised: captured at once, or held for a capture with manual capture
  /// ("Capture", https://docs.adyen.com/online-payments/capture: automatic capture is the
  /// default; `additionalData.manualCapture` `true` asks for manual capture); and stores its card
  /// when asked. Returns the tokenization additional data.
  mutating func authorise(_ payment: inout Payment) -> [String: String] {
    payment.resultCode = "Authorised"
    payment.refusal = nil
    if payment.manualCapture {
      payment.capturable = payment.amount.value
    } else {
      payment.captured = payment.amount.value
    }
    guard payment.storedPaymentMethodId == nil, payment.storePaymentMethod, let shopper = payment.shopperReference
    else { return [:] }
    let (id, operation) = store(payment.card, shopper: shopper, model: payment.recurringProcessingModel)
    payment.storedPaymentMethodId = id
    return [
      "tokenization.shopperReference": shopper, "tokenization.storedPaymentMethodId": id,
      "tokenization.store.operationType": operation,
    ]
  }

  /// Tokenization ("Tokenization", https://docs.adyen.com/online-payments/tokenization; the
  /// `tokenization.store.operationType` values of the AUTHORISATION webhook): the shopper's card
  /// stored once (`created`); the same card again `alreadyExisting`, or `updated` when its expiry
  /// changed, under the same id.
  mutating func store(_ card: AdyenTestCard, shopper: String, model: String?) -> (id: String, operation: String) {
    if let id = storedOrder.first(where: {
      let method = storedMethods[$0]!
      return !method.disabled && method.shopperReference == shopper && method.card.number == card.number
    }) {
      guard storedMethods[id]!.card != card else { return (id, "alreadyExisting") }
      storedMethods[id]!.card = card
      return (id, "updated")
    }
    storedCounter += 1
    let id = "TOKN" + Self.pad(storedCounter, 12)
    storedMethods[id] = StoredMethod(id: id, shopperReference: shopper, card: card, recurringProcessingModel: model)
    storedOrder.append(id)
    return (id, "created")
  }

  /// The `/payments` answer (`PaymentResponse`, v71): `additionalData` (tokenization and the
  /// selected optional fields), `amount`, `merchantReference`, `paymentMethod` `{brand, type}` when
  /// Authorised, `pspReference`, `refusalReason` and `refusalReasonCode` when refused or in error,
  /// `resultCode`.
  func paymentResponse(_ payment: Payment, tokenization: [String: String]) -> AdyenJSON {
    var additional = tokenization
    let authorised = payment.resultCode == "Authorised"
    for field in additionalDataFields {
      switch field {
      case "authCode" where authorised: additional[field] = payment.authCode
      case "cardBin": additional[field] = payment.card.bin
      case "cardSummary": additional[field] = payment.card.last4
      case "expiryDate": additional[field] = "\(payment.card.expiryMonth)/\(payment.card.expiryYear)"
      case "paymentMethod": additional[field] = payment.card.brand
      case "recurringProcessingModel": additional[field] = payment.recurringProcessingModel
      default: break
      }
    }
    var members: [(String, AdyenJSON)] = []
    if !additional.isEmpty {
      members.append(
        ("additionalData", .object(additional.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
    }
    members += [("amount", payment.amount.json), ("merchantReference", .string(payment.reference))]
    if authorised {
      members.append(
        ("paymentMethod", .object([("brand", .string(payment.card.brand)), ("type", .string(payment.methodType))])))
    }
    members.append(("pspReference", .string(payment.pspReference)))
    if let refusal = payment.refusal {
      members += [("refusalReason", .string(refusal.reason)), ("refusalReasonCode", .string(String(refusal.code)))]
    }
    members.append(("resultCode", .string(payment.resultCode)))
    return .object(members)
  }

  /// The AUTHORISATION item: `success` whether Authorised; `reason` `authCode:last4:MM/YYYY` when
  /// it is, the refusal reason otherwise (the AuthorisationNotificationRequestItem schema);
  /// `operations` `CANCEL, CAPTURE, REFUND` for manual capture and `REFUND` once captured.
  mutating func queueAuthorisation(_ payment: Payment, tokenization: [String: String]) {
    let authorised = payment.resultCode == "Authorised"
    let month = payment.card.expiryMonth < 10 ? "0\(payment.card.expiryMonth)" : String(payment.card.expiryMonth)
    var operations: [String]?
    if authorised, payment.amount.value > 0 {
      operations = payment.manualCapture ? ["CANCEL", "CAPTURE", "REFUND"] : ["REFUND"]
    }
    queued.append(
      AdyenNotificationItem(
        eventCode: "AUTHORISATION", success: authorised, pspReference: payment.pspReference, originalReference: nil,
        merchantAccountCode: merchantAccount, merchantReference: payment.reference, currency: payment.amount.currency,
        value: payment.amount.value, paymentMethod: payment.card.brand,
        reason: authorised
          ? "\(payment.authCode):\(payment.card.last4):\(month)/\(payment.card.expiryYear)" : payment.refusal?.reason,
        operations: operations, additionalData: tokenization, eventDate: AdyenClock.eventDate(now)))
  }
}

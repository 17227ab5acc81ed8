--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: backofficerequest; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.backofficerequest (
    kind text NOT NULL,
    key text NOT NULL,
    orderid text NOT NULL,
    fingerprint text NOT NULL,
    result text NOT NULL,
    createdat text NOT NULL,
    CONSTRAINT backofficerequest_kind_check CHECK ((kind = ANY (ARRAY['capture'::text, 'cancel'::text, 'refund'::text])))
);


--
-- Name: charge; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.charge (
    chargeid text NOT NULL,
    token text NOT NULL,
    status text NOT NULL,
    failurecode text,
    declinecode text,
    amountminor bigint NOT NULL,
    currencycode text NOT NULL,
    createdat text NOT NULL,
    CONSTRAINT charge_status_check CHECK ((status = ANY (ARRAY['succeeded'::text, 'failed'::text])))
);


--
-- Name: chargetoken; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chargetoken (
    token text NOT NULL,
    sequence bigint NOT NULL,
    binding text NOT NULL,
    billingcontact text,
    amountminor bigint NOT NULL,
    currencycode text NOT NULL,
    sandboxoutcome text NOT NULL,
    issuedat text NOT NULL,
    expiresat bigint NOT NULL,
    usedat text,
    requestfingerprint text,
    result text,
    paymentmethod text,
    authorizationid text,
    gatewaypaymentdata text,
    walletordertoken text
);


--
-- Name: order; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public."order" (
    orderid text NOT NULL,
    chargeid text NOT NULL,
    createdat text NOT NULL,
    amountminor bigint NOT NULL,
    currencycode text NOT NULL,
    document text NOT NULL,
    status text DEFAULT 'paid'::text NOT NULL,
    capturedminor bigint,
    refundedminor bigint DEFAULT 0 NOT NULL,
    shippingminor bigint,
    shippingtaxminor bigint,
    shippingrefunded boolean DEFAULT false NOT NULL,
    gatewaypaymentid text,
    taxincluded boolean DEFAULT false NOT NULL,
    CONSTRAINT order_refundedminor_check CHECK ((refundedminor >= 0)),
    CONSTRAINT order_status_check CHECK ((status = ANY (ARRAY['authorized'::text, 'paid'::text, 'partially_refunded'::text, 'refunded'::text, 'canceled'::text])))
);


--
-- Name: orderevent; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.orderevent (
    orderid text NOT NULL,
    "position" bigint NOT NULL,
    kind text NOT NULL,
    at text NOT NULL,
    amountminor bigint NOT NULL,
    reference text NOT NULL,
    reason text,
    CONSTRAINT orderevent_kind_check CHECK ((kind = ANY (ARRAY['placed'::text, 'authorized'::text, 'captured'::text, 'canceled'::text, 'refunded'::text]))),
    CONSTRAINT orderevent_position_check CHECK (("position" > 0))
);


--
-- Name: orderitem; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.orderitem (
    orderid text NOT NULL,
    sku text NOT NULL,
    quantity bigint NOT NULL,
    unitpriceminor bigint NOT NULL,
    amountminor bigint NOT NULL,
    discountminor bigint,
    taxminor bigint,
    refundedquantity bigint DEFAULT 0 NOT NULL,
    "position" bigint NOT NULL,
    CONSTRAINT orderitem_quantity_check CHECK ((quantity > 0)),
    CONSTRAINT orderitem_refundedquantity_check CHECK ((refundedquantity >= 0))
);


--
-- Name: orderitem_position_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.orderitem ALTER COLUMN "position" ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.orderitem_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: paymentattempt; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.paymentattempt (
    orderid text NOT NULL,
    token text NOT NULL,
    idempotencykey text NOT NULL,
    paymentdata text NOT NULL,
    amountminor bigint NOT NULL,
    currencycode text NOT NULL,
    capturemanually boolean NOT NULL,
    createdat text NOT NULL,
    itemcount bigint NOT NULL,
    prepared text NOT NULL,
    CONSTRAINT paymentattempt_amountminor_check CHECK ((amountminor > 0))
);


--
-- Name: paymentauthorization; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.paymentauthorization (
    authorizationid text NOT NULL,
    transactionid text NOT NULL,
    network text NOT NULL,
    cardtype text NOT NULL,
    lastfour text NOT NULL,
    amountminor bigint NOT NULL,
    currencycode text NOT NULL,
    status text NOT NULL,
    createdat text NOT NULL,
    chargeid text,
    capturedat text,
    "position" bigint NOT NULL,
    releasedat text,
    CONSTRAINT paymentauthorization_lastfour_check CHECK ((length(lastfour) = 4)),
    CONSTRAINT paymentauthorization_status_check CHECK ((status = ANY (ARRAY['held'::text, 'declined'::text, 'captured'::text])))
);


--
-- Name: paymentauthorization_position_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.paymentauthorization ALTER COLUMN "position" ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.paymentauthorization_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: payservice_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.payservice_migrations (
    identifier text NOT NULL,
    appliedat timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: refund; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.refund (
    refundid text NOT NULL,
    orderid text NOT NULL,
    "position" bigint NOT NULL,
    createdat text NOT NULL,
    amountminor bigint NOT NULL,
    document text NOT NULL,
    CONSTRAINT refund_amountminor_check CHECK ((amountminor >= 0))
);


--
-- Name: stock; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.stock (
    sku text NOT NULL,
    quantityonhand bigint NOT NULL,
    sold bigint DEFAULT 0 NOT NULL,
    CONSTRAINT stock_quantityonhand_check CHECK ((quantityonhand >= 0)),
    CONSTRAINT stock_sold_check CHECK ((sold >= 0))
);


--
-- Name: storekey; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.storekey (
    purpose text NOT NULL,
    keyhex text NOT NULL,
    CONSTRAINT storekey_keyhex_check CHECK ((length(keyhex) = 64))
);


--
-- Data for Name: backofficerequest; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.backofficerequest VALUES ('refund', 'rf-b-1', 'ord_5d98b9d84b8f5744fbf499a3f13f7ec0', '{"orderId":"ord_5d98b9d84b8f5744fbf499a3f13f7ec0","refundId":"rf-b-1","lines":[{"sku":"mug","quantity":2,"restock":"return"}],"shipping":false,"reason":"Two mugs chipped"}', '{"status":"succeeded","orderId":"ord_5d98b9d84b8f5744fbf499a3f13f7ec0","refund":{"refundId":"rf-b-1","createdAt":"2026-11-21T12:00:00Z","amount":"15.10","tax":"0.58","lines":[{"sku":"mug","quantity":2,"restock":"return","amount":"15.10","tax":"0.58"}],"reason":"Two mugs chipped","gatewayRefundId":"re_ec075ace074734b1f5a3aa72ba6ce2dc"},"orderStatus":"partially_refunded","amountRefunded":"15.10","amountRemaining":"18.01"}', '2026-11-21T12:00:00Z');
INSERT INTO public.backofficerequest VALUES ('refund', 'rf-c-1', 'ord_e8db70653d86b5dbb8ecaa8569aa8164', '{"orderId":"ord_e8db70653d86b5dbb8ecaa8569aa8164","refundId":"rf-c-1","shipping":false,"amount":"5.00","reason":"Late delivery"}', '{"status":"succeeded","orderId":"ord_e8db70653d86b5dbb8ecaa8569aa8164","refund":{"refundId":"rf-c-1","createdAt":"2026-11-21T12:00:00Z","amount":"5.00","tax":"0.00","lines":[],"reason":"Late delivery","gatewayRefundId":"re_0ce89bf3796d1caa7508a432c1a4e3e4"},"orderStatus":"partially_refunded","amountRefunded":"5.00","amountRemaining":"50.83"}', '2026-11-21T12:00:00Z');
INSERT INTO public.backofficerequest VALUES ('refund', 'rf-d-1', 'ord_5de860c8089745fb20110a2695789da6', '{"orderId":"ord_5de860c8089745fb20110a2695789da6","refundId":"rf-d-1","lines":[{"sku":"pen","quantity":4,"restock":"cancel"}],"shipping":true}', '{"status":"succeeded","orderId":"ord_5de860c8089745fb20110a2695789da6","refund":{"refundId":"rf-d-1","createdAt":"2026-11-21T12:00:00Z","amount":"7.70","tax":"0.30","lines":[{"sku":"pen","quantity":4,"restock":"cancel","amount":"1.46","tax":"0.06"}],"shipping":{"amount":"6.24","tax":"0.24"},"gatewayRefundId":"re_3825801d4c7d37a84e6daaea89ea0f67"},"orderStatus":"refunded","amountRefunded":"7.70","amountRemaining":"0.00"}', '2026-11-21T12:00:00Z');
INSERT INTO public.backofficerequest VALUES ('refund', 'rf-e-1', 'ord_7be684ddc99edab667ee2a281dc37364', '{"orderId":"ord_7be684ddc99edab667ee2a281dc37364","refundId":"rf-e-1","lines":[{"sku":"lamp","quantity":1,"restock":"return"}],"shipping":false,"reason":"Wrong colour"}', '{"status":"failed","failureCode":"refund_declined","message":"The gateway declined the refund; the order is unchanged. Refund the buyer another way, or try again with a new refundId."}', '2026-11-21T12:00:00Z');
INSERT INTO public.backofficerequest VALUES ('capture', 'cap-g-1', 'ord_e154fbda935cf3fcfe91ec0d2c1bf4d2', '{"orderId":"ord_e154fbda935cf3fcfe91ec0d2c1bf4d2","amount":"20.00","captureId":"cap-g-1"}', '{"status":"succeeded","orderId":"ord_e154fbda935cf3fcfe91ec0d2c1bf4d2","captureId":"cap-g-1","amountCaptured":"20.00","amountReleased":"32.02","orderStatus":"paid"}', '2026-11-21T13:00:00Z');
INSERT INTO public.backofficerequest VALUES ('cancel', 'cancel-h-1', 'ord_e6199d6623632ff43409f696a08eda44', '{"orderId":"ord_e6199d6623632ff43409f696a08eda44","reason":"Customer changed their mind","cancelId":"cancel-h-1"}', '{"status":"succeeded","orderId":"ord_e6199d6623632ff43409f696a08eda44","cancelId":"cancel-h-1","amountReleased":"107.25","restocked":[{"sku":"clock","quantity":2}],"orderStatus":"canceled"}', '2026-11-21T13:00:00Z');


--
-- Data for Name: charge; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.charge VALUES ('ch_d3a91a476eefc59f6ec763df4047fefa', 'ctok_a2e02242e3bde8d3700ecbdae3282eaac670a37f', 'succeeded', NULL, NULL, 6693, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_0d6c616b9921548dc61eea20dae980d2', 'ctok_748dc571fdb223b2be2702503324bddba411921a', 'succeeded', NULL, NULL, 3311, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_d4657b5523807734eefb76794c5e1c35', 'ctok_2f21cb2fbdc8cf5f74c468c3f96e1fddc8a806fd', 'succeeded', NULL, NULL, 5583, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_a100ae8d6eaedbe79aa81cd7ce60bc49', 'ctok_bc1e36b5471504fd196df77312bc6d57c085e903', 'succeeded', NULL, NULL, 770, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_33a209c7431c40d5053f63029fd0bfc4', 'ctok_15ff98159674d9e02cf53cae2960e1f76d27f792', 'succeeded', NULL, NULL, 2734, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_eb8bd40312dd335c9394cd2832be57ad', 'ctok_128b204c8902380ff585e9e45846b7b3923adc5d', 'failed', 'card_declined', 'insufficient_funds', 1520, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_2fe48a852b01f9869472cfb0f5935425', 'ctok_b19bb26c21f1d1ed060bb97d72db48d21aabefda', 'failed', 'expired_card', NULL, 1117, 'USD', '2026-11-21T12:00:00Z');
INSERT INTO public.charge VALUES ('ch_416c24053e31c5ccd79cbbc34fd784bc', 'ctok_4a596c5beab6d0867c2f171f7ecec1985aa3d437', 'succeeded', NULL, NULL, 5902, 'USD', '2026-11-21T13:00:00Z');
INSERT INTO public.charge VALUES ('ch_27aff28a24a6385099e81e26cb564b2d', 'ctok_318ae886884090796df6b02e79c3a42e8ef89434', 'succeeded', NULL, NULL, 5202, 'USD', '2026-11-21T13:00:00Z');
INSERT INTO public.charge VALUES ('ch_781bcc05c036a94b54fec7764f88a531', 'ctok_2875c43a42c914f0477c6bfce3ed8059c7a0b2d1', 'succeeded', NULL, NULL, 10725, 'USD', '2026-11-21T13:00:00Z');


--
-- Data for Name: chargetoken; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.chargetoken VALUES ('ctok_a2e02242e3bde8d3700ecbdae3282eaac670a37f', 1, '{"items":[{"sku":"clock","quantity":1}],"shippingMethod":"express","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}}', '{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}', 6693, 'USD', 'approved', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"clock\",\"quantity\":1}],\"shippingMethod\":\"express\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 Infinite Loop\"],\"locality\":\"Cupertino\",\"administrativeArea\":\"CA\",\"postalCode\":\"95014\",\"countryCode\":\"US\"}}","amount":"66.93","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_bc82421af08c8bfc642aae9b5b8aeaf9","chargeId":"ch_d3a91a476eefc59f6ec763df4047fefa","amount":"66.93","currencyCode":"USD","order":{"orderId":"ord_bc82421af08c8bfc642aae9b5b8aeaf9","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"clock","name":"Clock","quantity":1,"unitPrice":"50.00","amount":"50.00"}],"shippingMethod":"express","summaryItems":[{"label":"Clock","amount":"50.00","type":"final"},{"label":"Credit card surcharge","amount":"0.75","type":"final"},{"label":"Shipping","amount":"12.50","type":"final"},{"label":"Tax","amount":"3.68","type":"final"},{"label":"Acme","amount":"66.93","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"billingContact":{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"amount":"66.93","currencyCode":"USD","chargeId":"ch_d3a91a476eefc59f6ec763df4047fefa","status":"paid"}}', '{"network":"visa","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_748dc571fdb223b2be2702503324bddba411921a', 2, '{"items":[{"sku":"mug","quantity":3},{"sku":"notebook","quantity":1}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"couponCode":"SAVE10"}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 3311, 'USD', 'approved', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"mug\",\"quantity\":3},{\"sku\":\"notebook\",\"quantity\":1}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"},\"couponCode\":\"SAVE10\"}","amount":"33.11","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_5d98b9d84b8f5744fbf499a3f13f7ec0","chargeId":"ch_0d6c616b9921548dc61eea20dae980d2","amount":"33.11","currencyCode":"USD","order":{"orderId":"ord_5d98b9d84b8f5744fbf499a3f13f7ec0","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"mug","name":"Mug","quantity":3,"unitPrice":"8.49","amount":"25.47"},{"sku":"notebook","name":"Notebook","quantity":1,"unitPrice":"4.75","amount":"4.75"}],"shippingMethod":"standard","couponCode":"SAVE10","summaryItems":[{"label":"Mug × 3","amount":"25.47","type":"final"},{"label":"Notebook","amount":"4.75","type":"final"},{"label":"Discount (SAVE10)","amount":"-3.02","type":"final"},{"label":"Store card discount","amount":"-1.36","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"1.27","type":"final"},{"label":"Acme","amount":"33.11","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"33.11","currencyCode":"USD","chargeId":"ch_0d6c616b9921548dc61eea20dae980d2","status":"paid"}}', '{"network":"privatelabel","type":"store"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_2f21cb2fbdc8cf5f74c468c3f96e1fddc8a806fd', 3, '{"items":[{"sku":"lamp","quantity":2}],"shippingMethod":"express","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 5583, 'USD', 'approved', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"lamp\",\"quantity\":2}],\"shippingMethod\":\"express\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","billingContact":"{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}","paymentMethod":"{\"network\":\"amex\",\"type\":\"credit\"}","amount":"55.83","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_e8db70653d86b5dbb8ecaa8569aa8164","chargeId":"ch_d4657b5523807734eefb76794c5e1c35","amount":"55.83","currencyCode":"USD","order":{"orderId":"ord_e8db70653d86b5dbb8ecaa8569aa8164","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"lamp","name":"Desk Lamp","quantity":2,"unitPrice":"19.99","amount":"39.98"}],"shippingMethod":"express","summaryItems":[{"label":"Desk Lamp × 2","amount":"39.98","type":"final"},{"label":"Amex surcharge","amount":"1.20","type":"final"},{"label":"Shipping","amount":"12.50","type":"final"},{"label":"Tax","amount":"2.15","type":"final"},{"label":"Acme","amount":"55.83","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"55.83","currencyCode":"USD","chargeId":"ch_d4657b5523807734eefb76794c5e1c35","status":"paid"}}', '{"network":"amex","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_bc1e36b5471504fd196df77312bc6d57c085e903', 4, '{"items":[{"sku":"pen","quantity":4}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 770, 'USD', 'approved', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"pen\",\"quantity\":4}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","amount":"7.70","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_5de860c8089745fb20110a2695789da6","chargeId":"ch_a100ae8d6eaedbe79aa81cd7ce60bc49","amount":"7.70","currencyCode":"USD","order":{"orderId":"ord_5de860c8089745fb20110a2695789da6","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"pen","name":"Pen","quantity":4,"unitPrice":"0.35","amount":"1.40"}],"shippingMethod":"standard","summaryItems":[{"label":"Pen × 4","amount":"1.40","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"0.30","type":"final"},{"label":"Acme","amount":"7.70","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"7.70","currencyCode":"USD","chargeId":"ch_a100ae8d6eaedbe79aa81cd7ce60bc49","status":"paid"}}', '{"network":"visa","type":"debit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_15ff98159674d9e02cf53cae2960e1f76d27f792', 5, '{"items":[{"sku":"lamp","quantity":1}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 2734, 'USD', 'refundFails', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"lamp\",\"quantity\":1}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","amount":"27.34","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_7be684ddc99edab667ee2a281dc37364","chargeId":"ch_33a209c7431c40d5053f63029fd0bfc4","amount":"27.34","currencyCode":"USD","order":{"orderId":"ord_7be684ddc99edab667ee2a281dc37364","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"lamp","name":"Desk Lamp","quantity":1,"unitPrice":"19.99","amount":"19.99"}],"shippingMethod":"standard","summaryItems":[{"label":"Desk Lamp","amount":"19.99","type":"final"},{"label":"Credit card surcharge","amount":"0.30","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"1.05","type":"final"},{"label":"Acme","amount":"27.34","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"27.34","currencyCode":"USD","chargeId":"ch_33a209c7431c40d5053f63029fd0bfc4","status":"paid"}}', '{"network":"visa","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_128b204c8902380ff585e9e45846b7b3923adc5d', 6, '{"items":[{"sku":"mug","quantity":1}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 1520, 'USD', 'insufficientFunds', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"mug\",\"quantity\":1}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","amount":"15.20","currencyCode":"USD","asSent":true}', '{"status":"failed","failureCode":"card_declined","declineCode":"insufficient_funds","chargeId":"ch_eb8bd40312dd335c9394cd2832be57ad","message":"The card was declined for insufficient funds."}', '{"network":"visa","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_b19bb26c21f1d1ed060bb97d72db48d21aabefda', 7, '{"items":[{"sku":"notebook","quantity":1}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}', 1117, 'USD', 'expiredCard', '2026-11-21T12:00:00Z', 1795266000, '2026-11-21T12:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"notebook\",\"quantity\":1}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 Infinite Loop\"],\"locality\":\"Cupertino\",\"administrativeArea\":\"CA\",\"postalCode\":\"95014\",\"countryCode\":\"US\"}}","amount":"11.17","currencyCode":"USD","asSent":true}', '{"status":"failed","failureCode":"expired_card","chargeId":"ch_2fe48a852b01f9869472cfb0f5935425","message":"The card has expired."}', '{"network":"visa","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_4a596c5beab6d0867c2f171f7ecec1985aa3d437', 8, '{"items":[{"sku":"clock","quantity":1}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 5902, 'USD', 'approved', '2026-11-21T13:00:00Z', 1795269600, '2026-11-21T13:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"clock\",\"quantity\":1}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","amount":"59.02","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_fef831a43cc18707f646a35114b7a419","chargeId":"ch_416c24053e31c5ccd79cbbc34fd784bc","amount":"59.02","currencyCode":"USD","order":{"orderId":"ord_fef831a43cc18707f646a35114b7a419","createdAt":"2026-11-21T13:00:00Z","items":[{"sku":"clock","name":"Clock","quantity":1,"unitPrice":"50.00","amount":"50.00"}],"shippingMethod":"standard","summaryItems":[{"label":"Clock","amount":"50.00","type":"final"},{"label":"Credit card surcharge","amount":"0.75","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"2.27","type":"final"},{"label":"Acme","amount":"59.02","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"59.02","currencyCode":"USD","chargeId":"ch_416c24053e31c5ccd79cbbc34fd784bc","status":"authorized"}}', '{"network":"visa","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_318ae886884090796df6b02e79c3a42e8ef89434', 9, '{"items":[{"sku":"mug","quantity":2},{"sku":"lamp","quantity":1}],"shippingMethod":"express","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 5202, 'USD', 'approved', '2026-11-21T13:00:00Z', 1795269600, '2026-11-21T13:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"mug\",\"quantity\":2},{\"sku\":\"lamp\",\"quantity\":1}],\"shippingMethod\":\"express\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","amount":"52.02","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_e154fbda935cf3fcfe91ec0d2c1bf4d2","chargeId":"ch_27aff28a24a6385099e81e26cb564b2d","amount":"52.02","currencyCode":"USD","order":{"orderId":"ord_e154fbda935cf3fcfe91ec0d2c1bf4d2","createdAt":"2026-11-21T13:00:00Z","items":[{"sku":"mug","name":"Mug","quantity":2,"unitPrice":"8.49","amount":"16.98"},{"sku":"lamp","name":"Desk Lamp","quantity":1,"unitPrice":"19.99","amount":"19.99"}],"shippingMethod":"express","summaryItems":[{"label":"Mug × 2","amount":"16.98","type":"final"},{"label":"Desk Lamp","amount":"19.99","type":"final"},{"label":"Credit card surcharge","amount":"0.55","type":"final"},{"label":"Shipping","amount":"12.50","type":"final"},{"label":"Tax","amount":"2.00","type":"final"},{"label":"Acme","amount":"52.02","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"52.02","currencyCode":"USD","chargeId":"ch_27aff28a24a6385099e81e26cb564b2d","status":"authorized"}}', '{"network":"visa","type":"credit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_2875c43a42c914f0477c6bfce3ed8059c7a0b2d1', 10, '{"items":[{"sku":"clock","quantity":2}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"}', 10725, 'USD', 'approved', '2026-11-21T13:00:00Z', 1795269600, '2026-11-21T13:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"clock\",\"quantity\":2}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 Infinite Loop\"],\"locality\":\"Cupertino\",\"administrativeArea\":\"CA\",\"postalCode\":\"95014\",\"countryCode\":\"US\"}}","amount":"107.25","currencyCode":"USD","asSent":true}', '{"status":"succeeded","orderId":"ord_e6199d6623632ff43409f696a08eda44","chargeId":"ch_781bcc05c036a94b54fec7764f88a531","amount":"107.25","currencyCode":"USD","order":{"orderId":"ord_e6199d6623632ff43409f696a08eda44","createdAt":"2026-11-21T13:00:00Z","items":[{"sku":"clock","name":"Clock","quantity":2,"unitPrice":"50.00","amount":"100.00"}],"shippingMethod":"standard","summaryItems":[{"label":"Clock × 2","amount":"100.00","type":"final"},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"7.25","type":"final"},{"label":"Acme","amount":"107.25","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"amount":"107.25","currencyCode":"USD","chargeId":"ch_781bcc05c036a94b54fec7764f88a531","status":"authorized"}}', '{"network":"visa","type":"debit"}', NULL, NULL, NULL);
INSERT INTO public.chargetoken VALUES ('ctok_152e9ac2982eb148cdd8dc9485d9ad3124086a93', 11, '{"items":[{"sku":"mug","quantity":2}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 2416, 'USD', 'approved', '2026-11-21T14:00:00Z', 1795273200, '2026-11-21T14:00:00Z', '{"binding":"{\"items\":[{\"sku\":\"mug\",\"quantity\":2}],\"shippingMethod\":\"standard\",\"shippingContact\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"emailAddress\":\"ada@example.com\",\"addressLines\":[\"1 State St\"],\"locality\":\"Albany\",\"administrativeArea\":\"NY\",\"postalCode\":\"12207\",\"countryCode\":\"US\"}}","amount":"24.16","currencyCode":"USD","asSent":true}', NULL, '{"network":"visa","type":"credit"}', NULL, 'tok_visa', NULL);
INSERT INTO public.chargetoken VALUES ('ctok_854ef119eb0a534aec830e46d1f72b7532efd201', 12, '{"items":[{"sku":"notebook","quantity":1}],"shippingMethod":"standard","shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}}', '{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"}', 1125, 'USD', 'approved', '2026-11-21T14:00:00Z', 1795273200, NULL, NULL, NULL, '{"network":"visa","type":"credit"}', NULL, 'tok_visa', NULL);


--
-- Data for Name: order; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public."order" VALUES ('ord_bc82421af08c8bfc642aae9b5b8aeaf9', 'ch_d3a91a476eefc59f6ec763df4047fefa', '2026-11-21T12:00:00Z', 6693, 'USD', '{"orderId":"ord_bc82421af08c8bfc642aae9b5b8aeaf9","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"clock","name":"Clock","quantity":1,"unitPrice":"50.00","amount":"50.00"}],"shippingMethod":"express","summaryItems":[{"label":"Clock","amount":"50.00","type":"final"},{"label":"Credit card surcharge","amount":"0.75","type":"final"},{"label":"Shipping","amount":"12.50","type":"final"},{"label":"Tax","amount":"3.68","type":"final"},{"label":"Acme","amount":"66.93","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"billingContact":{"addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"amount":"66.93","currencyCode":"USD","chargeId":"ch_d3a91a476eefc59f6ec763df4047fefa","status":"paid"}', 'paid', 6693, 0, 1250, 0, false, NULL, false);
INSERT INTO public."order" VALUES ('ord_7be684ddc99edab667ee2a281dc37364', 'ch_33a209c7431c40d5053f63029fd0bfc4', '2026-11-21T12:00:00Z', 2734, 'USD', '{"orderId":"ord_7be684ddc99edab667ee2a281dc37364","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"lamp","name":"Desk Lamp","quantity":1,"unitPrice":"19.99","amount":"19.99"}],"shippingMethod":"standard","summaryItems":[{"label":"Desk Lamp","amount":"19.99","type":"final"},{"label":"Credit card surcharge","amount":"0.30","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"1.05","type":"final"},{"label":"Acme","amount":"27.34","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"27.34","currencyCode":"USD","chargeId":"ch_33a209c7431c40d5053f63029fd0bfc4","status":"paid"}', 'paid', 2734, 0, 600, 24, false, NULL, false);
INSERT INTO public."order" VALUES ('ord_5d98b9d84b8f5744fbf499a3f13f7ec0', 'ch_0d6c616b9921548dc61eea20dae980d2', '2026-11-21T12:00:00Z', 3311, 'USD', '{"orderId":"ord_5d98b9d84b8f5744fbf499a3f13f7ec0","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"mug","name":"Mug","quantity":3,"unitPrice":"8.49","amount":"25.47"},{"sku":"notebook","name":"Notebook","quantity":1,"unitPrice":"4.75","amount":"4.75"}],"shippingMethod":"standard","couponCode":"SAVE10","summaryItems":[{"label":"Mug × 3","amount":"25.47","type":"final"},{"label":"Notebook","amount":"4.75","type":"final"},{"label":"Discount (SAVE10)","amount":"-3.02","type":"final"},{"label":"Store card discount","amount":"-1.36","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"1.27","type":"final"},{"label":"Acme","amount":"33.11","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"33.11","currencyCode":"USD","chargeId":"ch_0d6c616b9921548dc61eea20dae980d2","status":"paid"}', 'partially_refunded', 3311, 1510, 600, 24, false, NULL, false);
INSERT INTO public."order" VALUES ('ord_e8db70653d86b5dbb8ecaa8569aa8164', 'ch_d4657b5523807734eefb76794c5e1c35', '2026-11-21T12:00:00Z', 5583, 'USD', '{"orderId":"ord_e8db70653d86b5dbb8ecaa8569aa8164","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"lamp","name":"Desk Lamp","quantity":2,"unitPrice":"19.99","amount":"39.98"}],"shippingMethod":"express","summaryItems":[{"label":"Desk Lamp × 2","amount":"39.98","type":"final"},{"label":"Amex surcharge","amount":"1.20","type":"final"},{"label":"Shipping","amount":"12.50","type":"final"},{"label":"Tax","amount":"2.15","type":"final"},{"label":"Acme","amount":"55.83","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"55.83","currencyCode":"USD","chargeId":"ch_d4657b5523807734eefb76794c5e1c35","status":"paid"}', 'partially_refunded', 5583, 500, 1250, 50, false, NULL, false);
INSERT INTO public."order" VALUES ('ord_5de860c8089745fb20110a2695789da6', 'ch_a100ae8d6eaedbe79aa81cd7ce60bc49', '2026-11-21T12:00:00Z', 770, 'USD', '{"orderId":"ord_5de860c8089745fb20110a2695789da6","createdAt":"2026-11-21T12:00:00Z","items":[{"sku":"pen","name":"Pen","quantity":4,"unitPrice":"0.35","amount":"1.40"}],"shippingMethod":"standard","summaryItems":[{"label":"Pen × 4","amount":"1.40","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"0.30","type":"final"},{"label":"Acme","amount":"7.70","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"7.70","currencyCode":"USD","chargeId":"ch_a100ae8d6eaedbe79aa81cd7ce60bc49","status":"paid"}', 'refunded', 770, 770, 600, 24, true, NULL, false);
INSERT INTO public."order" VALUES ('ord_fef831a43cc18707f646a35114b7a419', 'ch_416c24053e31c5ccd79cbbc34fd784bc', '2026-11-21T13:00:00Z', 5902, 'USD', '{"orderId":"ord_fef831a43cc18707f646a35114b7a419","createdAt":"2026-11-21T13:00:00Z","items":[{"sku":"clock","name":"Clock","quantity":1,"unitPrice":"50.00","amount":"50.00"}],"shippingMethod":"standard","summaryItems":[{"label":"Clock","amount":"50.00","type":"final"},{"label":"Credit card surcharge","amount":"0.75","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"2.27","type":"final"},{"label":"Acme","amount":"59.02","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"59.02","currencyCode":"USD","chargeId":"ch_416c24053e31c5ccd79cbbc34fd784bc","status":"authorized"}', 'authorized', NULL, 0, 600, 24, false, NULL, false);
INSERT INTO public."order" VALUES ('ord_e154fbda935cf3fcfe91ec0d2c1bf4d2', 'ch_27aff28a24a6385099e81e26cb564b2d', '2026-11-21T13:00:00Z', 5202, 'USD', '{"orderId":"ord_e154fbda935cf3fcfe91ec0d2c1bf4d2","createdAt":"2026-11-21T13:00:00Z","items":[{"sku":"mug","name":"Mug","quantity":2,"unitPrice":"8.49","amount":"16.98"},{"sku":"lamp","name":"Desk Lamp","quantity":1,"unitPrice":"19.99","amount":"19.99"}],"shippingMethod":"express","summaryItems":[{"label":"Mug × 2","amount":"16.98","type":"final"},{"label":"Desk Lamp","amount":"19.99","type":"final"},{"label":"Credit card surcharge","amount":"0.55","type":"final"},{"label":"Shipping","amount":"12.50","type":"final"},{"label":"Tax","amount":"2.00","type":"final"},{"label":"Acme","amount":"52.02","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"52.02","currencyCode":"USD","chargeId":"ch_27aff28a24a6385099e81e26cb564b2d","status":"authorized"}', 'paid', 2000, 0, 1250, 50, false, NULL, false);
INSERT INTO public."order" VALUES ('ord_e6199d6623632ff43409f696a08eda44', 'ch_781bcc05c036a94b54fec7764f88a531', '2026-11-21T13:00:00Z', 10725, 'USD', '{"orderId":"ord_e6199d6623632ff43409f696a08eda44","createdAt":"2026-11-21T13:00:00Z","items":[{"sku":"clock","name":"Clock","quantity":2,"unitPrice":"50.00","amount":"100.00"}],"shippingMethod":"standard","summaryItems":[{"label":"Clock × 2","amount":"100.00","type":"final"},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"7.25","type":"final"},{"label":"Acme","amount":"107.25","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 Infinite Loop"],"locality":"Cupertino","administrativeArea":"CA","postalCode":"95014","countryCode":"US"},"amount":"107.25","currencyCode":"USD","chargeId":"ch_781bcc05c036a94b54fec7764f88a531","status":"authorized"}', 'canceled', NULL, 0, 0, 0, false, NULL, false);


--
-- Data for Name: orderevent; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.orderevent VALUES ('ord_5d98b9d84b8f5744fbf499a3f13f7ec0', 1, 'refunded', '2026-11-21T12:00:00Z', 1510, 'rf-b-1', 'Two mugs chipped');
INSERT INTO public.orderevent VALUES ('ord_e8db70653d86b5dbb8ecaa8569aa8164', 1, 'refunded', '2026-11-21T12:00:00Z', 500, 'rf-c-1', 'Late delivery');
INSERT INTO public.orderevent VALUES ('ord_5de860c8089745fb20110a2695789da6', 1, 'refunded', '2026-11-21T12:00:00Z', 770, 'rf-d-1', NULL);
INSERT INTO public.orderevent VALUES ('ord_e154fbda935cf3fcfe91ec0d2c1bf4d2', 1, 'captured', '2026-11-21T13:00:00Z', 2000, 'cap-g-1', NULL);
INSERT INTO public.orderevent VALUES ('ord_e6199d6623632ff43409f696a08eda44', 1, 'canceled', '2026-11-21T13:00:00Z', 10725, 'cancel-h-1', 'Customer changed their mind');


--
-- Data for Name: orderitem; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_bc82421af08c8bfc642aae9b5b8aeaf9', 'clock', 1, 5000, 5000, -75, 368, 0, 1);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_5d98b9d84b8f5744fbf499a3f13f7ec0', 'notebook', 1, 475, 475, 69, 16, 0, 3);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_e8db70653d86b5dbb8ecaa8569aa8164', 'lamp', 2, 1999, 3998, -120, 165, 0, 4);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_7be684ddc99edab667ee2a281dc37364', 'lamp', 1, 1999, 1999, -30, 81, 0, 6);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_5d98b9d84b8f5744fbf499a3f13f7ec0', 'mug', 3, 849, 2547, 369, 87, 2, 2);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_5de860c8089745fb20110a2695789da6', 'pen', 4, 35, 140, 0, 6, 4, 5);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_fef831a43cc18707f646a35114b7a419', 'clock', 1, 5000, 5000, -75, 203, 0, 7);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_e154fbda935cf3fcfe91ec0d2c1bf4d2', 'mug', 2, 849, 1698, -25, 69, 0, 8);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_e154fbda935cf3fcfe91ec0d2c1bf4d2', 'lamp', 1, 1999, 1999, -30, 81, 0, 9);
INSERT INTO public.orderitem OVERRIDING SYSTEM VALUE VALUES ('ord_e6199d6623632ff43409f696a08eda44', 'clock', 2, 5000, 10000, 0, 725, 0, 10);


--
-- Data for Name: paymentattempt; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.paymentattempt VALUES ('ord_b2380c7d630eb08dd540b483df99eac8', 'ctok_152e9ac2982eb148cdd8dc9485d9ad3124086a93', 'payservice-charge-ord_b2380c7d630eb08dd540b483df99eac8', 'tok_visa', 2416, 'USD', false, '2026-11-21T14:00:00Z', 2, '{"document":{"orderId":"ord_b2380c7d630eb08dd540b483df99eac8","createdAt":"2026-11-21T14:00:00Z","items":[{"sku":"mug","name":"Mug","quantity":2,"unitPrice":"8.49","amount":"16.98"}],"shippingMethod":"standard","summaryItems":[{"label":"Mug × 2","amount":"16.98","type":"final"},{"label":"Credit card surcharge","amount":"0.25","type":"final"},{"label":"Shipping","amount":"6.00","type":"final"},{"label":"Tax","amount":"0.93","type":"final"},{"label":"Acme","amount":"24.16","type":"final"}],"shippingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"billingContact":{"givenName":"Ada","familyName":"Lovelace","emailAddress":"ada@example.com","addressLines":["1 State St"],"locality":"Albany","administrativeArea":"NY","postalCode":"12207","countryCode":"US"},"amount":"24.16","currencyCode":"USD","status":"pending"},"lines":[{"sku":"mug","quantity":2,"unitPriceMinor":849,"amountMinor":1698,"discountMinor":-25,"taxMinor":69}],"amountMinor":2416,"shippingMinor":600,"shippingTaxMinor":24}');


--
-- Data for Name: paymentauthorization; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: payservice_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.payservice_migrations VALUES ('v1: stock, charge tokens, charges, orders', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v2: the authorized card on charge tokens', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v3: Apple Pay authorization holds', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v4: order status, per-line amounts, events, refunds and back-office requests', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v5: remote gateway payments and pending payment attempts', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v6: orders priced with tax included', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v7: Wallet order tracking tokens', '2026-11-21 12:00:00+00');
INSERT INTO public.payservice_migrations VALUES ('v8: the store''s identifier key; unused charge tokens by expiry', '2026-11-21 12:00:00+00');


--
-- Data for Name: refund; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.refund VALUES ('rf-b-1', 'ord_5d98b9d84b8f5744fbf499a3f13f7ec0', 1, '2026-11-21T12:00:00Z', 1510, '{"refundId":"rf-b-1","createdAt":"2026-11-21T12:00:00Z","amount":"15.10","tax":"0.58","lines":[{"sku":"mug","quantity":2,"restock":"return","amount":"15.10","tax":"0.58"}],"reason":"Two mugs chipped","gatewayRefundId":"re_ec075ace074734b1f5a3aa72ba6ce2dc"}');
INSERT INTO public.refund VALUES ('rf-c-1', 'ord_e8db70653d86b5dbb8ecaa8569aa8164', 1, '2026-11-21T12:00:00Z', 500, '{"refundId":"rf-c-1","createdAt":"2026-11-21T12:00:00Z","amount":"5.00","tax":"0.00","lines":[],"reason":"Late delivery","gatewayRefundId":"re_0ce89bf3796d1caa7508a432c1a4e3e4"}');
INSERT INTO public.refund VALUES ('rf-d-1', 'ord_5de860c8089745fb20110a2695789da6', 1, '2026-11-21T12:00:00Z', 770, '{"refundId":"rf-d-1","createdAt":"2026-11-21T12:00:00Z","amount":"7.70","tax":"0.30","lines":[{"sku":"pen","quantity":4,"restock":"cancel","amount":"1.46","tax":"0.06"}],"shipping":{"amount":"6.24","tax":"0.24"},"gatewayRefundId":"re_3825801d4c7d37a84e6daaea89ea0f67"}');


--
-- Data for Name: stock; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.stock VALUES ('notebook', 2, 1);
INSERT INTO public.stock VALUES ('pen', 1000, 0);
INSERT INTO public.stock VALUES ('lamp', 21, 4);
INSERT INTO public.stock VALUES ('clock', 8, 2);
INSERT INTO public.stock VALUES ('mug', 95, 5);


--
-- Data for Name: storekey; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.storekey VALUES ('identifiers', '7061797365727669636520746573747320706179736572766963652074657374');


--
-- Name: orderitem_position_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.orderitem_position_seq', 10, true);


--
-- Name: paymentauthorization_position_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.paymentauthorization_position_seq', 1, false);


--
-- Name: backofficerequest backofficerequest_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.backofficerequest
    ADD CONSTRAINT backofficerequest_pkey PRIMARY KEY (kind, key);


--
-- Name: charge charge_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.charge
    ADD CONSTRAINT charge_pkey PRIMARY KEY (chargeid);


--
-- Name: charge charge_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.charge
    ADD CONSTRAINT charge_token_key UNIQUE (token);


--
-- Name: chargetoken chargetoken_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chargetoken
    ADD CONSTRAINT chargetoken_pkey PRIMARY KEY (token);


--
-- Name: chargetoken chargetoken_sequence_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chargetoken
    ADD CONSTRAINT chargetoken_sequence_key UNIQUE (sequence);


--
-- Name: order order_chargeid_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_chargeid_key UNIQUE (chargeid);


--
-- Name: order order_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_pkey PRIMARY KEY (orderid);


--
-- Name: orderevent orderevent_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.orderevent
    ADD CONSTRAINT orderevent_pkey PRIMARY KEY (orderid, "position");


--
-- Name: orderitem orderitem_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.orderitem
    ADD CONSTRAINT orderitem_pkey PRIMARY KEY (orderid, sku);


--
-- Name: paymentattempt paymentattempt_idempotencykey_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.paymentattempt
    ADD CONSTRAINT paymentattempt_idempotencykey_key UNIQUE (idempotencykey);


--
-- Name: paymentattempt paymentattempt_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.paymentattempt
    ADD CONSTRAINT paymentattempt_pkey PRIMARY KEY (orderid);


--
-- Name: paymentattempt paymentattempt_token_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.paymentattempt
    ADD CONSTRAINT paymentattempt_token_key UNIQUE (token);


--
-- Name: paymentauthorization paymentauthorization_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.paymentauthorization
    ADD CONSTRAINT paymentauthorization_pkey PRIMARY KEY (authorizationid);


--
-- Name: paymentauthorization paymentauthorization_transactionid_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.paymentauthorization
    ADD CONSTRAINT paymentauthorization_transactionid_key UNIQUE (transactionid);


--
-- Name: payservice_migrations payservice_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.payservice_migrations
    ADD CONSTRAINT payservice_migrations_pkey PRIMARY KEY (identifier);


--
-- Name: refund refund_orderid_position_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refund
    ADD CONSTRAINT refund_orderid_position_key UNIQUE (orderid, "position");


--
-- Name: refund refund_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refund
    ADD CONSTRAINT refund_pkey PRIMARY KEY (refundid);


--
-- Name: stock stock_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.stock
    ADD CONSTRAINT stock_pkey PRIMARY KEY (sku);


--
-- Name: storekey storekey_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.storekey
    ADD CONSTRAINT storekey_pkey PRIMARY KEY (purpose);


--
-- Name: chargetokenunusedbyexpiry; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chargetokenunusedbyexpiry ON public.chargetoken USING btree (expiresat) WHERE (usedat IS NULL);


--
-- Name: orderbycreation; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX orderbycreation ON public."order" USING btree (createdat COLLATE "C", orderid COLLATE "C");


--
-- Name: backofficerequest backofficerequest_orderid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.backofficerequest
    ADD CONSTRAINT backofficerequest_orderid_fkey FOREIGN KEY (orderid) REFERENCES public."order"(orderid);


--
-- Name: charge charge_token_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.charge
    ADD CONSTRAINT charge_token_fkey FOREIGN KEY (token) REFERENCES public.chargetoken(token);


--
-- Name: chargetoken chargetoken_authorizationid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chargetoken
    ADD CONSTRAINT chargetoken_authorizationid_fkey FOREIGN KEY (authorizationid) REFERENCES public.paymentauthorization(authorizationid);


--
-- Name: order order_chargeid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."order"
    ADD CONSTRAINT order_chargeid_fkey FOREIGN KEY (chargeid) REFERENCES public.charge(chargeid);


--
-- Name: orderevent orderevent_orderid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.orderevent
    ADD CONSTRAINT orderevent_orderid_fkey FOREIGN KEY (orderid) REFERENCES public."order"(orderid);


--
-- Name: orderitem orderitem_orderid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.orderitem
    ADD CONSTRAINT orderitem_orderid_fkey FOREIGN KEY (orderid) REFERENCES public."order"(orderid);


--
-- Name: paymentattempt paymentattempt_token_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.paymentattempt
    ADD CONSTRAINT paymentattempt_token_fkey FOREIGN KEY (token) REFERENCES public.chargetoken(token);


--
-- Name: refund refund_orderid_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.refund
    ADD CONSTRAINT refund_orderid_fkey FOREIGN KEY (orderid) REFERENCES public."order"(orderid);


--
-- PostgreSQL database dump complete
--



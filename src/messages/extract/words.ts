/**
 * Word lists of the code finder. Lowercase (street words excepted: they are
 * matched as written); they describe kinds of text, never particular mails.
 *
 * Each list is written as whitespace-separated words, many to a line and
 * grouped by topic or language, so that a list reads and diffs as text; no
 * word contains a space.
 *
 * @module
 */

/** The words of a whitespace-separated list, in order. */
export function words(list: string): string[] {
  return list.trim().split(/\s+/);
}

/** Abbreviations whose final dot does not end a sentence. */
export const ABBREVIATIONS = new Set(words(`
  no nr st dr mr mrs ms eg e.g i.e ie vs ca tel str av apt ste inc ltd co approx z.b bzw sr jr
`));

/** Words that name a one-time code. */
export const STRONG_KEYWORDS = new Set(words(`
  code codes otp totp pin passcode one-time 2fa mfa tan mtan
  código codigo clave einmalpasswort einmalkennwort kode
`));

/** Prefixes of compounds ending in "code" that are code words (German writes them as one word). */
export const CODE_COMPOUND_PREFIXES = words(`
  bestätigungs verifizierungs verifikations sicherheits anmelde login einmal zugangs aktivierungs freischalt
  authentifizierungs pass pin otp 2fa sms e-mail email auth verification security sign-in signin access
`);

/** Words that come with a code without naming it: enough in its sentence, or on the lines around it. */
export const WEAK_KEYWORDS = new Set(words(`
  verification verify verifying confirm authentication authenticate login log-in sign-in signin two-factor
  bestätigen verifizierung verifizieren anmeldung anmelden authentifizierung
  verificación verificacion verificar confirmar autenticación
  vérification vérifier confirmer authentification connexion
`));

/** Two-word keywords: [first, second, strength]. */
export const KEYWORD_PAIRS: Array<[string, string, "strong" | "weak"]> = [
  ["one", "time", "strong"],
  ["single", "use", "strong"],
  ["usage", "unique", "strong"],
  ["solo", "uso", "strong"],
  ["two", "factor", "weak"],
  ["sign", "in", "weak"],
  ["log", "in", "weak"],
  ["inicio", "sesión", "weak"],
];

/** Words before "code" that make it some other kind of code. */
export const NOT_CODE_BEFORE = new Set(words(`
  promo promotional discount coupon voucher gift referral postal zip area country dress qr bar tracking
  error status http source sample example dial sort swift tax product colour color html css
  open clean legacy machine morse write writing ship shipping
`));

/** Words after "code" (or código, code in French) that make it some other kind of code. */
export const NOT_CODE_AFTER = new Set(words(`
  of review reviews base editor snippet snippets samples examples quality coverage
  postal promo promocional promotionnel qr fuente source
`));

/**
 * After "code de"/"código de": these make it a code to type; anything else
 * ("código de descuento", "code de réduction") does not.
 */
export const CODE_DE_OK = new Set(words(`
  verificación verificacion vérification confirmation confirmación seguridad sécurité connexion acceso accès
  activation activación inicio un usage
`));

/** Words that put a sentence in a shop or a newsletter: its codes are promotions, not one-time codes. */
export const COMMERCE = new Set(words(`
  promo promotional promocode coupon coupons discount discounts voucher vouchers referral checkout
  gutschein gutscheincode rabatt rabattcode aktionscode
  descuento descuentos cupón cupon promoción promocion
  réduction remise soldes
`));

/**
 * Words that label the number after them as something other than a code:
 * orders, invoices, accounts, addresses, phones, cards, pages, quantities.
 */
export const LABELS = new Set([
  ...words(`
    order orders bestellung bestellnummer auftrag auftragsnummer pedido commande
    invoice rechnung rechnungsnummer factura facture receipt quittung recibo reçu
    ref reference referenz referencia référence
    account acct konto cuenta compte customer kunde kundennummer cliente client member membership mitgliedsnummer
    case ticket tracking sendung sendungsnummer seguimiento suivi shipment package parcel paket colis envío
    item sku article artikel model room zimmer suite apt unit flight flug vuelo gate seat box
    po zip postcode postal plz
    tel telephone telefon teléfono téléphone phone fax call mobile mobil móvil ext
    id transaction txn booking buchung reserva reservation réservation number nummer número numéro
    issue episode version build release pr commit
    ending endet terminada last card karte tarjeta carte iban bic
    vat ust-idnr tax nif cif siret employee patient policy claim serial imei lot batch week kw step
    year jahr año année since seit desde depuis
    total subtotal amount betrag summe importe montant price preis precio prix
    qty quantity menge cantidad quantité
  `),
  // Quantities: "up to 10000", "over 2500", "more than 1200", "bis zu 5000".
  ...words(`
    up over than about approximately around nearly almost least includes including additional extra top zu hasta environ
  `),
  // Copyright years ("© 2024") and number signs ("# 1234", "n° 1234").
  ...words(`© (c) copyright # № n° nº`),
]);

/** Labels that are ordinary words unless written as abbreviations ("No. 1234", not "no 1234"). */
export const DOTTED_LABELS = new Set(["no", "nr", "núm", "num"]);

/** Currency symbols, codes and names: a number next to one is an amount. */
export const CURRENCIES = new Set(words(`
  $ € £ ¥ usd eur gbp chf jpy cad aud sek nok dkk pln mxn brl inr us$
  euro euros dollar dollars pounds dólares
`));

/** Month names (English, German, Spanish, French): a year next to one is part of a date. */
export const MONTHS = new Set(words(`
  jan january feb february mar march apr april may jun june jul july aug august
  sep sept september oct october nov november dec december
  januar jänner februar märz mai juni juli oktober dezember
  enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre
  janvier février mars avril juin juillet août septembre octobre novembre décembre
`));

/** Words after a number that make it a quantity, an amount, a duration or a time. */
export const UNITS = new Set([
  ...CURRENCIES,
  ...words(`
    % items item artikel artículos articles units pcs stück stk x
    users members subscribers readers people customers followers views downloads stars votes words pages steps
    km mi miles meters m kg g lb lbs gb mb kb tb mhz ghz mph kcal cal
    uhr h hrs hours minutes min mins seconds sec days tage días jours weeks months years jahre años ans
    utc gmt cet cest est edt pst pdt am pm a.m p.m
    ft feet sq ms points pts credits calories rpm kwh mah dpi px ppm
  `),
]);

/** Words of a street address; any in a line makes its numbers house numbers and postcodes. */
export const STREET_WORDS = new Set(words(`
  Street St Ave Avenue Road Rd Blvd Boulevard Lane Ln Drive Dr Way Parkway Pkwy Suite Ste Floor Fl Court Ct
  Terrace Highway Hwy Square Sq Plaza Building Bldg
  Straße Strasse Str Weg Platz Allee Gasse
  Calle Avenida Av Paseo Rue Bd Chemin Place Quai
  calle rue avenue avenida boulevard paseo quai
`));

/** Endings of one-word German street names (Friedrichstraße 12). */
export const STREET_SUFFIXES = [
  "straße",
  "strasse",
  "str.",
  "weg",
  "allee",
  "platz",
  "gasse",
  "damm",
  "ufer",
  "chaussee",
];

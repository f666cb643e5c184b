// The words of the refusals the engine itself shows inside a session (the "not allowed" page that
// replaces chrome:// and similar pages, and the egress route's answer to a forbidden address), in
// the session's language: the seven share languages, English for every other (decisions.md 42).
import { SHARE_LANGUAGES, type ShareLanguage } from '../../../protocol/index.js';
import type { AddressCategory } from './address-policy.js';

/** What a refusal of the egress route tells the person: never what a name resolves to. */
export type ShownRefusal =
  | { kind: 'address'; host: string; category: AddressCategory }
  | { kind: 'metadata-name'; host: string }
  | { kind: 'leads-to-address'; host: string }
  /** This host's address on one of the engine's own ports (engine-ports.ts), as the page named it. */
  | { kind: 'engine-listener'; host: string; port: number };

interface RefusalWords {
  title: string;
  page: (url: string) => string;
  address: (host: string, what: string) => string;
  metadataName: (host: string) => string;
  leadsTo: (host: string) => string;
  engineListener: (target: string) => string;
  categories: Record<AddressCategory, string>;
}

const WORDS: Record<ShareLanguage, RefusalWords> = {
  en: {
    title: 'Not allowed',
    page: (url) => `This address cannot be opened in the remote browser: ${url}`,
    address: (host, what) => `${host} is ${what} and is not allowed`,
    metadataName: (host) => `${host} is a cloud metadata name and is not allowed`,
    leadsTo: (host) => `${host} leads to an address that is not allowed`,
    engineListener: (target) => `${target} is a port of the remote browser service itself and is not allowed`,
    categories: {
      loopback: 'a loopback address',
      private: 'a private address',
      'link-local': 'a link-local address',
      'unique-local': 'a unique-local address',
      unspecified: 'an unspecified address',
      multicast: 'a multicast address',
      broadcast: 'a broadcast address',
      'carrier-grade-nat': 'a carrier-grade NAT address',
      metadata: 'a cloud metadata address',
      reserved: 'a reserved address',
      'this-host': 'an address of this host',
      invalid: 'not a valid address',
    },
  },
  de: {
    title: 'Nicht erlaubt',
    page: (url) => `Diese Adresse kann im entfernten Browser nicht geöffnet werden: ${url}`,
    address: (host, what) => `${host} ist ${what} und nicht erlaubt`,
    metadataName: (host) => `${host} ist ein Cloud-Metadaten-Name und nicht erlaubt`,
    leadsTo: (host) => `${host} führt zu einer Adresse, die nicht erlaubt ist`,
    engineListener: (target) => `${target} ist ein Port des Dienstes, der den entfernten Browser betreibt, und nicht erlaubt`,
    categories: {
      loopback: 'eine Loopback-Adresse',
      private: 'eine private Adresse',
      'link-local': 'eine Link-Local-Adresse',
      'unique-local': 'eine Unique-Local-Adresse',
      unspecified: 'eine unspezifizierte Adresse',
      multicast: 'eine Multicast-Adresse',
      broadcast: 'eine Broadcast-Adresse',
      'carrier-grade-nat': 'eine Carrier-Grade-NAT-Adresse',
      metadata: 'eine Cloud-Metadaten-Adresse',
      reserved: 'eine reservierte Adresse',
      'this-host': 'eine Adresse dieses Hosts',
      invalid: 'keine gültige Adresse',
    },
  },
  fr: {
    title: 'Non autorisé',
    page: (url) => `Cette adresse ne peut pas être ouverte dans le navigateur distant : ${url}`,
    address: (host, what) => `${host} est ${what} et n’est pas autorisée`,
    metadataName: (host) => `${host} est un nom de métadonnées cloud et n’est pas autorisé`,
    leadsTo: (host) => `${host} mène à une adresse qui n’est pas autorisée`,
    engineListener: (target) => `${target} est un port du service du navigateur distant lui-même et n’est pas autorisé`,
    categories: {
      loopback: 'une adresse de bouclage',
      private: 'une adresse privée',
      'link-local': 'une adresse lien-local',
      'unique-local': 'une adresse locale unique',
      unspecified: 'une adresse non spécifiée',
      multicast: 'une adresse multicast',
      broadcast: 'une adresse de diffusion',
      'carrier-grade-nat': 'une adresse NAT d’opérateur (CGNAT)',
      metadata: 'une adresse de métadonnées cloud',
      reserved: 'une adresse réservée',
      'this-host': 'une adresse de cet hôte',
      invalid: 'une adresse non valide',
    },
  },
  es: {
    title: 'No permitido',
    page: (url) => `Esta dirección no se puede abrir en el navegador remoto: ${url}`,
    address: (host, what) => `${host} es ${what} y no se permite`,
    metadataName: (host) => `${host} es un nombre de metadatos de la nube y no se permite`,
    leadsTo: (host) => `${host} lleva a una dirección que no se permite`,
    engineListener: (target) => `${target} es un puerto del propio servicio del navegador remoto y no se permite`,
    categories: {
      loopback: 'una dirección de loopback',
      private: 'una dirección privada',
      'link-local': 'una dirección de enlace local',
      'unique-local': 'una dirección local única',
      unspecified: 'una dirección no especificada',
      multicast: 'una dirección multicast',
      broadcast: 'una dirección de difusión',
      'carrier-grade-nat': 'una dirección NAT de operador (CGNAT)',
      metadata: 'una dirección de metadatos de la nube',
      reserved: 'una dirección reservada',
      'this-host': 'una dirección de este servidor',
      invalid: 'una dirección no válida',
    },
  },
  it: {
    title: 'Non consentito',
    page: (url) => `Questo indirizzo non può essere aperto nel browser remoto: ${url}`,
    address: (host, what) => `${host} è ${what} e non è consentito`,
    metadataName: (host) => `${host} è un nome di metadati cloud e non è consentito`,
    leadsTo: (host) => `${host} porta a un indirizzo non consentito`,
    engineListener: (target) => `${target} è una porta del servizio stesso del browser remoto e non è consentita`,
    categories: {
      loopback: 'un indirizzo di loopback',
      private: 'un indirizzo privato',
      'link-local': 'un indirizzo link-local',
      'unique-local': 'un indirizzo unique-local',
      unspecified: 'un indirizzo non specificato',
      multicast: 'un indirizzo multicast',
      broadcast: 'un indirizzo di broadcast',
      'carrier-grade-nat': 'un indirizzo NAT di operatore (CGNAT)',
      metadata: 'un indirizzo di metadati cloud',
      reserved: 'un indirizzo riservato',
      'this-host': 'un indirizzo di questo host',
      invalid: 'un indirizzo non valido',
    },
  },
  pt: {
    title: 'Não permitido',
    page: (url) => `Este endereço não pode ser aberto no navegador remoto: ${url}`,
    address: (host, what) => `${host} é ${what} e não é permitido`,
    metadataName: (host) => `${host} é um nome de metadados de nuvem e não é permitido`,
    leadsTo: (host) => `${host} leva a um endereço que não é permitido`,
    engineListener: (target) => `${target} é uma porta do próprio serviço do navegador remoto e não é permitida`,
    categories: {
      loopback: 'um endereço de loopback',
      private: 'um endereço privado',
      'link-local': 'um endereço link-local',
      'unique-local': 'um endereço unique-local',
      unspecified: 'um endereço não especificado',
      multicast: 'um endereço multicast',
      broadcast: 'um endereço de broadcast',
      'carrier-grade-nat': 'um endereço NAT de operadora (CGNAT)',
      metadata: 'um endereço de metadados de nuvem',
      reserved: 'um endereço reservado',
      'this-host': 'um endereço deste servidor',
      invalid: 'um endereço inválido',
    },
  },
  ja: {
    title: '許可されていません',
    page: (url) => `このアドレスはリモートブラウザーでは開けません: ${url}`,
    address: (host, what) => `${host} は${what}のため、許可されていません`,
    metadataName: (host) => `${host} はクラウドのメタデータ名のため、許可されていません`,
    leadsTo: (host) => `${host} は許可されていないアドレスにつながります`,
    engineListener: (target) => `${target} はリモートブラウザーのサービス自体のポートのため、許可されていません`,
    categories: {
      loopback: 'ループバックアドレス',
      private: 'プライベートアドレス',
      'link-local': 'リンクローカルアドレス',
      'unique-local': 'ユニークローカルアドレス',
      unspecified: '未指定のアドレス',
      multicast: 'マルチキャストアドレス',
      broadcast: 'ブロードキャストアドレス',
      'carrier-grade-nat': 'キャリアグレードNATのアドレス',
      metadata: 'クラウドのメタデータアドレス',
      reserved: '予約済みのアドレス',
      'this-host': 'このホストのアドレス',
      invalid: '無効なアドレス',
    },
  },
};

/** The language a session's refusals are shown in: its `language`'s own, when one of the seven. */
/** English words for an address category: the route's log and its X-Refused reason use them. */
export function categoryWords(category: AddressCategory): string {
  return WORDS.en.categories[category];
}

export function refusalLanguage(language: string): ShareLanguage {
  const code = language.split('-')[0]!.toLowerCase();
  return (SHARE_LANGUAGES as readonly string[]).includes(code) ? (code as ShareLanguage) : 'en';
}

/** The title of the "not allowed" page. */
export function refusedPageTitle(language: string): string {
  return WORDS[refusalLanguage(language)].title;
}

/** The "not allowed" page that replaces a page the session may not show, as a data: address. */
export function refusedPage(url: string, language: string): string {
  const lang = refusalLanguage(language);
  const words = WORDS[lang];
  const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html><html lang="${lang}"><meta charset="utf-8"><title>${escape(words.title)}</title>` +
    `<p style="font:16px sans-serif;margin:2em">${escape(words.page(url.slice(0, 200)))}</p></html>`;
  return `data:text/html;charset=utf-8,${encodeURIComponent(html)}`;
}

/** What the egress route answers a forbidden request with, in the session's language. */
export function egressRefusalText(shown: ShownRefusal, language: string): string {
  const words = WORDS[refusalLanguage(language)];
  switch (shown.kind) {
    case 'address':
      return words.address(shown.host, words.categories[shown.category]);
    case 'metadata-name':
      return words.metadataName(shown.host);
    case 'leads-to-address':
      return words.leadsTo(shown.host);
    case 'engine-listener':
      return words.engineListener(`${shown.host.includes(':') ? `[${shown.host}]` : shown.host}:${shown.port}`);
  }
}

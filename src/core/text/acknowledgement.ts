/**
 * Whether a turn only acknowledges ("ok", "thanks!", "yes, continue", "👍", "merci"): capture skips
 * such turns (src/service/capture.ts), they say nothing a later search should find. Pure: words
 * and emoji, whole-message matches only, conservative in every language it knows.
 */

/**
 * Words and phrases that on their own only acknowledge, in the languages we can judge. Kept short
 * and conservative: "no", "stop" or "use X" decide something and are never here.
 */
const ACKNOWLEDGEMENTS: Readonly<Record<string, string>> = {
  en:
    'ok|okay|okey|k|kk|okie|yes|yep|yeah|yup|ya|sure|thanks|thank you|thank you so much|thanks a lot|many thanks|thx|ty|tysm|' +
    'cheers|great|cool|nice|perfect|awesome|excellent|good|very good|fine|alright|all right|got it|gotcha|understood|noted|' +
    'i see|makes sense|sounds good|looks good|lgtm|agreed|exactly|continue|go on|go ahead|carry on|proceed|keep going|next|done|' +
    'please|please continue|please proceed|yes please|do it|hmm|hm|mhm|wow|great job|good job|well done|nice work|great work|thanks again',
  fr: "oui|merci|merci beaucoup|d'accord|ok merci|parfait|super|génial|très bien|bien|continue|continuez|vas-y|vas y|allez-y|c'est bon|entendu|compris|top|nickel",
  de: 'ja|danke|danke schön|dankeschön|vielen dank|gut|sehr gut|prima|passt|alles klar|genau|weiter|mach weiter|verstanden',
  es: 'sí|si|gracias|muchas gracias|vale|perfecto|genial|de acuerdo|entendido|continúa|continua|sigue|adelante|bueno|muy bien',
  pt: 'sim|obrigado|obrigada|valeu|beleza|perfeito|certo|continua|pode continuar',
  it: 'grazie|grazie mille|va bene|perfetto|bene|esatto|capito|vai',
  nl: 'dank je|dank je wel|dankjewel|bedankt|ga door|goed',
  ru: 'да|ок|спасибо|хорошо|отлично|понятно|продолжай|продолжайте',
  uk: 'так|дякую|добре',
  pl: 'tak|dzięki|dziękuję|dobrze',
  ja: 'はい|ありがとう|ありがとうございます|了解|了解です|わかりました|続けて|お願いします',
  zh: '好|好的|是的|对|谢谢|多谢|继续|嗯|行|可以',
  ko: '네|감사합니다|고마워|좋아요|계속',
};

const ACK_LIST = Object.values(ACKNOWLEDGEMENTS).flatMap((phrases) => phrases.split('|'));
/** Compared as the message's words are: lower case, apostrophes and hyphens dropped. */
const ACK_PHRASES = new Set(ACK_LIST.map((a) => a.replace(/['’-]/g, ' ').replace(/\s+/g, ' ')));
const LONGEST_ACK_WORDS = Math.max(...[...ACK_PHRASES].map((a) => a.split(' ').length));
/** A message longer than this is never only an acknowledgement. */
const MAX_ACK_CHARS = 60;
/** Emoji that acknowledge: thumbs up, ok hand, folded hands, check marks, smiles, hearts, clapping, party, rocket. */
const ACK_EMOJI = new Set([...'👍👌🙏✅✔🙂😊😀😁😃😄❤💙💚👏🎉🚀💯🔥✨😍🤩🤝'].map((e) => e.codePointAt(0)));
/** What dresses an emoji: skin tones, the emoji presentation selector, joiners. */
const EMOJI_DRESS = /\p{Emoji_Modifier}|\uFE0F|\u200D/gu;

/**
 * True when a turn only acknowledges ("ok", "thanks!", "yes, continue", "👍", "merci"), so capture
 * can skip it; false for anything that says something ("yes, use Postgres", "no", "why?").
 * @example isBareAcknowledgement('Ok, thanks!') // true
 */
export function isBareAcknowledgement(text: string): boolean {
  const trimmed = text.trim();
  // A question ("ok?", "right?") asks for something.
  if (trimmed === '' || trimmed.length > MAX_ACK_CHARS || /[?？¿]/.test(trimmed)) return false;
  const emoji = trimmed.match(/\p{Extended_Pictographic}/gu) ?? [];
  // "ok 👍" acknowledges; "ok ❌" does not.
  if (emoji.some((e) => !ACK_EMOJI.has(e.codePointAt(0)))) return false;
  const words = trimmed
    .replace(/\p{Extended_Pictographic}/gu, ' ')
    .replace(EMOJI_DRESS, ' ')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s]+/gu, ' ')
    .split(/\s+/)
    .filter((w) => w !== '');
  if (words.length === 0) return emoji.length > 0;
  // Whole words, greedily the longest known phrase first: "ok thanks", "yes please continue".
  let i = 0;
  while (i < words.length) {
    let matched = 0;
    for (let n = Math.min(LONGEST_ACK_WORDS, words.length - i); n >= 1; n--) {
      if (ACK_PHRASES.has(words.slice(i, i + n).join(' '))) {
        matched = n;
        break;
      }
    }
    if (matched === 0) return false;
    i += matched;
  }
  return true;
}

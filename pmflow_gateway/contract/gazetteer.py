"""Names the rules planner recognises: places, and well-known entities that carry a kind.

Data only. The planner matches Latin names case-insensitively on word boundaries and Chinese
names as substrings, and always reports the span as the user wrote it. A name that is not
here can still be found by the planner's shape rules (Latin names inside Chinese text,
capitalised phrases, tickers, company suffixes); this list is what those rules cannot see,
mostly Chinese names of companies and products.
"""

from __future__ import annotations

from collections.abc import Mapping

from pmflow_gateway.schemas import QueryKind

# Every provincial capital and the major Chinese cities, then major world cities, in both
# scripts. Left out on purpose: English names that are ordinary words or people (Nice,
# Reading, Washington, Dali). Pages about a city are mostly written in its own part of the
# world's language, so a question in the other language also searches in that one.
CHINESE_CITIES: tuple[tuple[str, str], ...] = (
    ("北京", "Beijing"), ("天津", "Tianjin"), ("上海", "Shanghai"), ("重庆", "Chongqing"),
    ("石家庄", "Shijiazhuang"), ("太原", "Taiyuan"), ("呼和浩特", "Hohhot"), ("沈阳", "Shenyang"),
    ("长春", "Changchun"), ("哈尔滨", "Harbin"), ("南京", "Nanjing"), ("杭州", "Hangzhou"),
    ("合肥", "Hefei"), ("福州", "Fuzhou"), ("南昌", "Nanchang"), ("济南", "Jinan"),
    ("郑州", "Zhengzhou"), ("武汉", "Wuhan"), ("长沙", "Changsha"), ("广州", "Guangzhou"),
    ("南宁", "Nanning"), ("海口", "Haikou"), ("成都", "Chengdu"), ("贵阳", "Guiyang"),
    ("昆明", "Kunming"), ("拉萨", "Lhasa"), ("西安", "Xi'an"), ("西安", "Xian"),
    ("兰州", "Lanzhou"),
    ("西宁", "Xining"), ("银川", "Yinchuan"), ("乌鲁木齐", "Urumqi"), ("台北", "Taipei"),
    ("香港", "Hong Kong"), ("澳门", "Macau"), ("深圳", "Shenzhen"), ("苏州", "Suzhou"),
    ("厦门", "Xiamen"), ("青岛", "Qingdao"), ("大连", "Dalian"), ("宁波", "Ningbo"),
    ("无锡", "Wuxi"), ("东莞", "Dongguan"), ("佛山", "Foshan"), ("珠海", "Zhuhai"),
    ("三亚", "Sanya"), ("桂林", "Guilin"), ("洛阳", "Luoyang"), ("温州", "Wenzhou"),
    ("烟台", "Yantai"), ("泉州", "Quanzhou"), ("常州", "Changzhou"), ("南通", "Nantong"),
    ("徐州", "Xuzhou"), ("唐山", "Tangshan"), ("保定", "Baoding"), ("惠州", "Huizhou"),
    ("绍兴", "Shaoxing"), ("嘉兴", "Jiaxing"), ("金华", "Jinhua"), ("扬州", "Yangzhou"),
    ("丽江", "Lijiang"),
)
WORLD_CITIES: tuple[tuple[str, str], ...] = (
    ("东京", "Tokyo"), ("大阪", "Osaka"), ("京都", "Kyoto"),
    ("首尔", "Seoul"), ("新加坡", "Singapore"), ("曼谷", "Bangkok"), ("吉隆坡", "Kuala Lumpur"),
    ("雅加达", "Jakarta"), ("河内", "Hanoi"), ("胡志明市", "Ho Chi Minh City"),
    ("马尼拉", "Manila"), ("新德里", "New Delhi"), ("孟买", "Mumbai"), ("迪拜", "Dubai"),
    ("伊斯坦布尔", "Istanbul"), ("莫斯科", "Moscow"), ("伦敦", "London"), ("巴黎", "Paris"),
    ("柏林", "Berlin"), ("罗马", "Rome"), ("马德里", "Madrid"), ("巴塞罗那", "Barcelona"),
    ("阿姆斯特丹", "Amsterdam"), ("布鲁塞尔", "Brussels"), ("维也纳", "Vienna"),
    ("苏黎世", "Zurich"), ("日内瓦", "Geneva"), ("米兰", "Milan"), ("慕尼黑", "Munich"),
    ("法兰克福", "Frankfurt"), ("斯德哥尔摩", "Stockholm"), ("哥本哈根", "Copenhagen"),
    ("奥斯陆", "Oslo"), ("赫尔辛基", "Helsinki"), ("华沙", "Warsaw"), ("布拉格", "Prague"),
    ("雅典", "Athens"), ("里斯本", "Lisbon"), ("都柏林", "Dublin"), ("爱丁堡", "Edinburgh"),
    ("曼彻斯特", "Manchester"), ("纽约", "New York"), ("洛杉矶", "Los Angeles"),
    ("旧金山", "San Francisco"), ("芝加哥", "Chicago"), ("西雅图", "Seattle"),
    ("波士顿", "Boston"), ("华盛顿", "Washington D.C."), ("迈阿密", "Miami"),
    ("拉斯维加斯", "Las Vegas"), ("休斯顿", "Houston"), ("多伦多", "Toronto"),
    ("温哥华", "Vancouver"), ("蒙特利尔", "Montreal"), ("墨西哥城", "Mexico City"),
    ("圣保罗", "Sao Paulo"), ("里约热内卢", "Rio de Janeiro"), ("布宜诺斯艾利斯", "Buenos Aires"),
    ("悉尼", "Sydney"), ("墨尔本", "Melbourne"), ("奥克兰", "Auckland"), ("开罗", "Cairo"),
    ("约翰内斯堡", "Johannesburg"), ("内罗毕", "Nairobi"), ("特拉维夫", "Tel Aviv"),
    ("多哈", "Doha"), ("利雅得", "Riyadh"),
)
CITIES: tuple[tuple[str, str], ...] = CHINESE_CITIES + WORLD_CITIES

COMPANIES: tuple[str, ...] = (
    "腾讯", "阿里巴巴", "阿里", "字节跳动", "百度", "京东", "美团", "拼多多", "小米", "华为",
    "比亚迪", "宁德时代", "贵州茅台", "茅台", "蔚来", "小鹏", "理想汽车", "网易", "快手",
    "小红书", "滴滴", "携程", "中芯国际", "联想", "海尔", "格力", "中国平安", "招商银行",
    "工商银行", "中国移动", "特斯拉", "苹果", "微软", "谷歌", "英伟达", "亚马逊", "台积电",
    "三星", "英特尔", "高通", "索尼", "丰田", "波音", "空客", "奈飞", "甲骨文", "星巴克",
    "Apple", "Microsoft", "Google", "Alphabet", "Amazon", "Meta", "Nvidia", "Tesla", "OpenAI",
    "Anthropic", "SpaceX", "Netflix", "Intel", "AMD", "TSMC", "Samsung", "Sony", "Toyota",
    "Boeing", "Airbus", "IBM", "Oracle", "Salesforce", "Uber", "Airbnb", "Stripe", "Walmart",
    "Alibaba", "Tencent", "Baidu", "ByteDance", "Huawei", "Xiaomi", "BYD", "Qualcomm",
    "Broadcom", "JPMorgan", "Goldman Sachs", "Berkshire Hathaway",
    # Tickers users type in lower case ("nvda revenue"); their aliases tie them to the name.
    "NVDA", "AAPL", "TSLA", "MSFT", "GOOGL", "AMZN",
)

MODELS: tuple[str, ...] = (
    "通义千问", "千问", "文心一言", "文心", "豆包", "混元", "智谱清言", "讯飞星火", "盘古大模型",
    "ChatGPT", "GPT", "Claude", "Gemini", "Llama", "Qwen", "DeepSeek", "Mistral", "Kimi",
    "Grok", "GLM", "ERNIE", "Doubao",
)

# Markets by instrument: asking about one of them is a market question, and the instrument
# decides how to search (a currency pair has a rate, a coin a price, an index a close).
CURRENCIES: tuple[str, ...] = (
    "美元", "人民币", "欧元", "日元", "英镑", "港币", "港元", "韩元", "瑞郎", "澳元", "加元",
    "USD", "CNY", "RMB", "EUR", "JPY", "GBP", "HKD", "KRW", "CHF", "AUD", "CAD",
)
CRYPTO: tuple[str, ...] = (
    "比特币", "以太坊", "狗狗币", "bitcoin", "ethereum", "ether", "btc", "eth", "dogecoin",
    "solana",
)
COMMODITIES: tuple[str, ...] = (
    "黄金", "白银", "原油", "金价", "银价", "油价", "gold", "silver", "crude oil", "brent",
)
INDICES: tuple[str, ...] = (
    "A股", "美股", "港股", "大盘", "上证指数", "深证成指", "创业板指", "恒生指数", "纳斯达克",
    "道琼斯", "标普500", "日经225", "日经指数", "Nasdaq", "Dow Jones", "S&P 500", "Nikkei",
    "Hang Seng", "FTSE",
)
MARKET_NAMES: tuple[str, ...] = CURRENCIES + CRYPTO + COMMODITIES + INDICES

# Chinese company names that are also everyday words: 苹果 is a fruit until the question asks
# about a share price, earnings or "公司". Each maps to the name the company's own pages use.
EVERYDAY_WORD_COMPANIES: Mapping[str, str] = {
    "苹果": "Apple Inc.", "小米": "Xiaomi", "亚马逊": "Amazon", "甲骨文": "Oracle",
    "三星": "Samsung",
}

DEFAULT_PREFERRED_DOMAINS: Mapping[tuple[QueryKind, str], tuple[str, ...]] = {
    # Official or primary sources per kind and language; model questions add the vendor's
    # own site from the names. Kept short on purpose: these only raise authority scores.
    (QueryKind.weather, "zh"): ("weather.com.cn", "nmc.cn"),
    (QueryKind.weather, "en"): ("accuweather.com", "weather.com"),
    (QueryKind.market, "zh"): ("sse.com.cn", "szse.cn", "hkex.com.hk", "chinamoney.com.cn"),
    (QueryKind.market, "en"): ("nasdaq.com", "nyse.com"),
    (QueryKind.news, "zh"): ("news.cn", "people.com.cn"),
    (QueryKind.news, "en"): ("reuters.com", "apnews.com"),
}

# Stock exchanges: an authority for share prices and indices, not for a coin or a currency.
STOCK_EXCHANGE_DOMAINS: frozenset[str] = frozenset({
    "sse.com.cn", "szse.cn", "hkex.com.hk", "nasdaq.com", "nyse.com"})

# Where a model's own announcements live, by the start of its name (lower case).
MODEL_VENDOR_DOMAINS: tuple[tuple[str, str], ...] = (
    ("chatgpt", "openai.com"), ("gpt", "openai.com"), ("openai", "openai.com"),
    ("claude", "anthropic.com"), ("gemini", "ai.google.dev"), ("llama", "llama.com"),
    ("qwen", "qwenlm.github.io"), ("通义", "aliyun.com"), ("千问", "aliyun.com"),
    ("deepseek", "deepseek.com"), ("mistral", "mistral.ai"), ("kimi", "moonshot.cn"),
    ("文心", "baidu.com"), ("ernie", "baidu.com"), ("豆包", "volcengine.com"),
    ("doubao", "volcengine.com"), ("grok", "x.ai"), ("glm", "zhipuai.cn"),
)

# Countries and regions are subjects ("美国签证") but too broad to be a location hint.
COUNTRIES: tuple[tuple[str, str], ...] = (
    ("中国", "China"), ("美国", "United States"), ("日本", "Japan"), ("韩国", "South Korea"),
    ("英国", "United Kingdom"), ("法国", "France"), ("德国", "Germany"), ("意大利", "Italy"),
    ("西班牙", "Spain"), ("俄罗斯", "Russia"), ("印度", "India"), ("加拿大", "Canada"),
    ("澳大利亚", "Australia"), ("巴西", "Brazil"), ("墨西哥", "Mexico"), ("泰国", "Thailand"),
    ("越南", "Vietnam"), ("马来西亚", "Malaysia"), ("印度尼西亚", "Indonesia"),
    ("菲律宾", "Philippines"), ("新西兰", "New Zealand"), ("瑞士", "Switzerland"),
    ("荷兰", "Netherlands"), ("瑞典", "Sweden"), ("以色列", "Israel"), ("沙特", "Saudi Arabia"),
    ("阿联酋", "UAE"), ("土耳其", "Turkey"), ("埃及", "Egypt"), ("南非", "South Africa"),
    ("乌克兰", "Ukraine"), ("台湾", "Taiwan"),
)

# English words that are never a name, even capitalised at the start of a question.
_STOP_WORDS_TEXT = (
    "what what's whats who who's when where why how is are was were be been the a an any about "
    "of for in on at to from and or me my i you your it its this that there please tell show "
    "give find search check look up do does did can could will would should latest new now "
    "today tomorrow tonight like get going more again continue ok so then just also some top "
    "best compare vs which between difference with has have had weather forecast news "
    "headlines day after before else other"
)
ENGLISH_STOP_WORDS: tuple[str, ...] = tuple(_STOP_WORDS_TEXT.split())

# Roles and acronyms that look like names in Chinese text ("腾讯的 CEO") but are not.
NOT_NAMES: tuple[str, ...] = ("ceo", "cfo", "cto", "ai", "api", "ipo", "llm", "aqi", "gdp", "etf",
                              "faq", "ok")

# Lower-case words that still belong to the name before them ("GPT-4o mini").
NAME_VARIANT_WORDS: tuple[str, ...] = ("mini", "pro", "max", "plus", "turbo", "flash", "lite",
                                       "ultra", "nano", "sonnet", "opus", "haiku")

# Names that mean the same thing across scripts and spellings: evidence that names any member
# of a group is about the others too. Cities and countries come from their pairs above.
ALIAS_GROUPS: tuple[tuple[str, ...], ...] = (
    ("腾讯", "Tencent"), ("阿里巴巴", "阿里", "Alibaba"), ("百度", "Baidu"), ("华为", "Huawei"),
    ("小米", "Xiaomi"), ("比亚迪", "BYD"), ("特斯拉", "Tesla", "TSLA"),
    ("苹果公司", "Apple Inc.", "Apple", "AAPL"), ("微软", "Microsoft", "MSFT"),
    ("谷歌", "Google", "Alphabet", "GOOGL"), ("英伟达", "Nvidia", "NVDA"),
    ("亚马逊", "Amazon", "AMZN"), ("台积电", "TSMC"), ("三星", "Samsung"), ("英特尔", "Intel"),
    ("高通", "Qualcomm"), ("索尼", "Sony"), ("丰田", "Toyota"), ("波音", "Boeing"),
    ("空客", "Airbus"), ("奈飞", "Netflix"), ("甲骨文", "Oracle"), ("字节跳动", "ByteDance"),
    ("京东", "JD.com"), ("宁德时代", "CATL"), ("通义千问", "千问", "Qwen"),
    ("文心一言", "文心", "ERNIE"), ("豆包", "Doubao"), ("深度求索", "DeepSeek"),
    ("比特币", "Bitcoin", "BTC"), ("以太坊", "Ethereum", "Ether", "ETH"),
    ("狗狗币", "Dogecoin", "DOGE"), ("美元", "USD", "US dollar"), ("人民币", "CNY", "RMB", "yuan"),
    ("欧元", "EUR", "euro"), ("日元", "JPY", "yen"), ("英镑", "GBP", "pound sterling"),
    ("港币", "港元", "HKD"), ("黄金", "金价", "gold"), ("白银", "银价", "silver"),
    ("原油", "油价", "crude oil"),
    ("上证指数", "沪指", "上证综指", "SSE Composite"), ("恒生指数", "恒指", "Hang Seng"),
    ("纳斯达克", "Nasdaq"), ("道琼斯", "Dow Jones"), ("标普500", "S&P 500"),
    ("日经指数", "日经225", "Nikkei"), ("世界杯", "World Cup"), ("中超", "中超联赛"),
)
# Words, not names: the same thing asked in either language ("腾讯的CEO" is answered by 首席执行官).
TERM_ALIASES: tuple[tuple[str, ...], ...] = (
    ("首席执行官", "CEO"), ("总部", "headquarters"), ("创始人", "founder"),
    ("财报", "业绩", "results", "earnings"), ("营收", "revenue"), ("销量", "sales"),
)

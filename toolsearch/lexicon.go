package toolsearch

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// stopWords are English words too common in tasks and descriptions to tell tools apart,
// and the "mcp" of public names.
var stopWords = toSet(`a an the and or but if of to in on at by for from with without into onto about as is are was
were be been being it its this that these those there here i me my we our you your he she they them their
please can could would should will shall may might must do does did done doing have has had having
some any all each every no not only just also then than so such very too more most much many
how what which who whom whose when where why up down out over under again once via using use used
want need like let lets get got show tell give me want mcp tool tools example e g eg com s t ll re ve d m`)

// Words above that still carry meaning for tools are taken back out: "get", "show",
// "give", "use", "all" and "up" are common in tool names and descriptions.
func init() {
	for _, w := range []string{"get", "show", "all", "up", "down", "out", "over", "use"} {
		delete(stopWords, w)
	}
}

// Verbs that lead a tool's name, stemmed: those that change something and those that only
// look. A question ("which tabs are open", 有哪些标签页) asks to look, so a tool whose
// name leads with a changing verb is a worse answer to it unless the question has that
// kind of verb itself ("how do I create …"). Verbs of two classes are in neither: "open"
// (a file is read, a pull request created), "post" and "put" (an API's POST creates, a
// post is sent).
var changeVerbs, lookVerbs = stemSet(`create add new make insert generate build delete remove drop destroy
purge erase clear update edit modify set change patch rename move write save upload send
reply forward archive unarchive restore assign unassign close reopen resolve merge approve decline
reject cancel mark start stop restart reboot kill install uninstall enable disable publish schedule
invite subscribe unsubscribe lock unlock pin unpin submit trigger run execute deploy scale fill
click type press toggle apply import copy duplicate clone fork attach detach connect disconnect
login logout push pull commit checkout tag label draft compose reset revoke grant`),
	stemSet(`get list read search find fetch show query describe view check count explain inspect browse
lookup retrieve download export analyze analyse summarize compare validate lint diff status info
monitor watch track preview print`)

// verbClass maps the verbs of [changeVerbs] and [lookVerbs] to their class: "look" for
// those that only look, else the first word of the first synonym group that has the
// verb (delete, remove and erase are one class), else the verb itself.
var verbClass = func() map[string]string {
	m := map[string]string{}
	for v := range lookVerbs {
		m[v] = "look"
	}
	for _, g := range synonymGroups {
		for _, w := range g {
			if t := stem(w); changeVerbs[t] && m[t] == "" {
				m[t] = stem(g[0])
			}
		}
	}
	for v := range changeVerbs {
		if m[v] == "" {
			m[v] = v
		}
	}
	return m
}()

// questionWords begin a question.
var questionWords = toSet(`what what's whats which who who's whom whose where when how is are was were
does do did has have any`)

// cjkQuestionMarks are words that make a Chinese task a question.
var cjkQuestionMarks = []string{"吗", "什么", "哪", "谁", "多少", "几", "怎么", "是否", "？"}

func stemSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[stem(w)] = true
	}
	return m
}

// cjkStopChars are Chinese function characters that never start or end a useful bigram.
var cjkStopChars = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "的了吗呢吧啊我你他她它们把被帮请给个一这那些在是和与及或也都就要想能可以么" {
		m[r] = true
	}
	return m
}()

// synonymGroups are words that tasks use interchangeably for what tools do and work on. A
// query word brings in the other words of its groups at a lower weight ([Options]).
var synonymGroups = [][]string{
	{"delete", "remove", "erase", "drop", "destroy", "purge", "discard", "rm", "del", "uninstall"},
	{"create", "make", "new", "add", "generate", "build", "insert", "open", "start"},
	{"list", "enumerate", "all", "show", "browse", "ls", "overview", "index"},
	{"get", "fetch", "retrieve", "read", "obtain", "load", "show", "view", "see", "look", "display", "return", "open", "cat", "print", "inspect", "detail", "describe"},
	{"search", "find", "lookup", "query", "look", "seek", "locate", "discover", "grep", "match"},
	{"update", "edit", "modify", "change", "patch", "alter", "replace", "set", "rewrite", "tweak", "fix", "adjust"},
	{"write", "save", "store", "put", "persist", "overwrite", "dump"},
	{"move", "rename", "mv", "relocate", "transfer"},
	{"copy", "duplicate", "clone", "fork"},
	{"run", "execute", "exec", "launch", "invoke", "start", "trigger", "call", "perform", "evaluate", "eval"},
	{"stop", "kill", "terminate", "end", "halt", "abort", "cancel", "quit", "close", "shutdown"},
	{"file", "document", "doc", "text"},
	{"folder", "directory", "dir", "path"},
	{"image", "picture", "photo", "screenshot", "snapshot", "capture", "png", "jpeg", "screen"},
	{"page", "webpage", "site", "website", "url", "link", "web", "tab", "browser"},
	{"navigate", "go", "visit", "goto", "open", "browse", "load"},
	{"click", "press", "tap", "push"},
	{"type", "enter", "input", "fill", "key", "keyboard", "typing"},
	{"hover", "mouseover"},
	{"pull", "pr", "merge"},
	{"repository", "repo", "project", "codebase"},
	{"issue", "ticket", "bug", "task"},
	{"comment", "reply", "respond", "answer", "note", "feedback", "review"},
	{"message", "msg", "post", "chat", "send", "dm"},
	{"channel", "room", "conversation"},
	{"user", "member", "person", "people", "profile", "account", "teammate", "colleague"},
	{"pod", "container", "workload"},
	{"kubernetes", "k8s", "kube", "kubectl", "cluster"},
	{"deployment", "deploy", "release", "rollout"},
	{"scale", "resize", "replica"},
	{"chart", "graph", "plot", "diagram", "visualize", "visualization", "visualise", "draw", "map"},
	{"weather", "forecast", "temperature", "rain", "climate"},
	{"direction", "route", "routing", "path", "way", "navigation", "travel", "commute", "trip"},
	{"drive", "driving", "car"},
	{"walk", "walking", "foot"},
	{"bicycle", "bike", "cycling", "bicycling", "cycle"},
	{"transit", "bus", "subway", "metro", "train", "public"},
	{"address", "location", "place", "poi", "venue", "spot", "where"},
	{"geocode", "coordinate", "latitude", "longitude", "lat", "lng", "lon", "gps"},
	{"distance", "far", "km", "mile"},
	{"nearby", "around", "near", "close", "surrounding", "vicinity"},
	{"javascript", "js", "script", "code", "snippet"},
	{"sql", "database", "db", "table", "postgres", "postgresql"},
	{"memory", "remember", "knowledge", "graph", "fact", "entity", "observation", "recall"},
	{"log", "logs", "output", "console", "stdout"},
	{"process", "pid", "terminal", "shell", "command", "session"},
	{"config", "configuration", "setting", "settings", "option", "preference"},
	{"scrape", "crawl", "extract", "parse", "harvest", "spider"},
	{"docs", "documentation", "manual", "reference", "api", "library"},
	{"think", "thinking", "reason", "reflect", "thought", "step"},
	{"performance", "speed", "slow", "fast", "profile", "trace", "vitals", "lighthouse"},
	{"network", "request", "http", "traffic", "xhr"},
	{"dialog", "alert", "popup", "confirm", "prompt", "modal"},
	{"upload", "attach"},
	{"wait", "until", "appear", "sleep", "pause"},
	{"environment", "env", "variable"},
	{"sum", "add", "plus", "total", "arithmetic"},
	{"echo", "repeat", "back"},
	{"paper", "article", "publication", "arxiv", "research", "study"},
	{"heap", "memory", "leak"},
	{"record", "recording", "video", "screencast"},
	{"ip", "geolocation", "geoip"},
	{"traffic", "congestion", "jam"},
	{"branch", "ref"},
	{"commit", "history", "changes"},
	{"status", "state", "progress", "check"},
	{"credit", "usage", "quota", "balance", "billing"},
	{"monitor", "watch", "schedule", "recurring"},
	{"helm", "chart"},
	{"port", "forward", "tunnel"},
	{"size", "sizes", "big", "large", "space"},
	{"tree", "recursive", "hierarchy", "nested"},
	{"allowed", "permitted", "accessible", "access"},
	{"media", "audio", "image", "binary", "base64"},
	{"compress", "gzip", "zip", "archive"},
	{"reaction", "emoji", "react"},
	{"thread", "replies"},
	{"pdf", "document"},
	{"block", "paragraph", "content"},
	{"css", "style", "styles"},
	{"form", "field", "fields"},
	{"dropdown", "select", "option", "combobox"},
	{"drag", "drop", "dragging"},
	{"accessibility", "a11y", "aria"},
	{"emulate", "simulate", "pretend", "mimic", "throttle"},
	{"disk", "filesystem", "local", "drive", "storage"},
	{"content", "contents", "inside", "body", "text"},
	{"multiple", "several", "many", "batch", "bulk", "simultaneously", "once"},
	{"relation", "relationship", "link", "connection", "edge", "between"},
	{"url", "link", "https", "http", "www"},
	{"select", "switch", "choose", "pick", "focus", "activate"},
	// mail, calendars, contacts
	{"email", "mail", "inbox", "mailbox", "gmail", "outlook"},
	{"draft", "compose", "unsent"},
	{"forward", "fwd"},
	{"attachment", "attached", "enclosure"},
	{"calendar", "event", "meeting", "appointment", "invitation", "invite", "agenda"},
	{"free", "busy", "availability", "available", "freebusy"},
	{"contact", "contacts", "phone", "addressbook"},
	{"label", "tag", "category"},
	// work tracking
	{"ticket", "issue", "story", "bug", "task", "card"},
	{"todo", "task", "reminder", "remind", "checklist"},
	{"done", "complete", "completed", "finish", "finished", "close", "resolve", "resolved"},
	{"sprint", "iteration", "cycle"},
	{"assign", "assignee", "delegate", "owner"},
	{"priority", "urgent", "p1", "important"},
	{"approve", "approval", "accept", "lgtm"},
	{"decline", "reject", "refuse", "deny"},
	{"subtask", "child", "breakdown"},
	{"roadmap", "milestone", "plan", "initiative"},
	// operations
	{"incident", "outage", "downtime", "disruption"},
	{"oncall", "duty", "pager", "rota"},
	{"alert", "alarm", "warning", "firing", "alerting", "monitor"},
	{"error", "exception", "crash", "failure", "fail", "failed", "failing", "broken"},
	{"metric", "metrics", "timeseries", "promql", "gauge", "counter"},
	{"trace", "traces", "span", "apm", "tracing"},
	{"server", "droplet", "vm", "instance", "machine", "host", "node"},
	{"reboot", "restart", "powercycle", "bounce"},
	{"pipeline", "ci", "build", "workflow", "job"},
	{"flaky", "intermittent", "unstable"},
	{"lint", "linter", "eslint"},
	{"silence", "mute", "snooze", "quiet"},
	{"firewall", "port", "ingress"},
	{"sync", "synchronize", "mirror"},
	{"backup", "snapshot", "copy"},
	{"export", "download", "dump"},
	{"import", "load", "ingest"},
	{"extract", "unzip", "unpack", "decompress", "untar"},
	// data
	{"spreadsheet", "excel", "sheet", "worksheet", "workbook", "xlsx", "csv"},
	{"record", "row", "entry"},
	{"column", "field", "property", "attribute"},
	{"collection", "table"},
	{"vector", "embedding", "semantic", "similar", "similarity"},
	{"rerank", "reorder", "relevance"},
	// the web and media
	{"news", "headline", "headlines"},
	{"video", "clip", "youtube"},
	{"transcript", "subtitle", "subtitles", "caption", "captions"},
	{"translate", "translation", "translator"},
	{"rephrase", "rewrite", "paraphrase", "reword", "polish"},
	{"domain", "whois", "registrar", "dns"},
	{"cookie", "cookies"},
	{"login", "signin", "authenticate", "auth", "logon"},
	{"markdown", "md", "readable", "article"},
	{"summary", "summarize", "tldr", "digest", "overview"},
	// finance
	{"stock", "share", "shares", "ticker", "equity", "quote"},
	{"price", "cost", "pricing", "quote", "fare"},
	{"crypto", "cryptocurrency", "bitcoin", "btc", "eth", "ethereum", "coin", "token"},
	{"candle", "candlestick", "ohlcv", "kline"},
	{"buy", "purchase", "order"},
	{"balance", "funds", "holdings", "wallet"},
	// travel, food, body
	{"flight", "airline", "plane", "fly", "flights"},
	{"airport", "terminal"},
	{"hotel", "accommodation", "lodging", "stay", "apartment", "airbnb", "room", "rental"},
	{"itinerary", "trip", "travel", "vacation", "holiday", "journey"},
	{"attraction", "sight", "sightseeing", "landmark", "poi"},
	{"restaurant", "food", "eat", "dining", "cafe", "coffee"},
	{"recipe", "cook", "cooking", "dish", "meal", "cuisine"},
	{"workout", "exercise", "training", "gym", "fitness", "lift", "squat"},
	{"weight", "measurement", "body"},
	{"pollution", "aqi", "smog", "pm2"},
	{"time", "clock", "timezone", "hour"},
	// devices
	{"phone", "mobile", "device", "android", "iphone", "ios", "simulator", "emulator"},
	{"app", "application"},
	{"swipe", "scroll", "fling"},
	{"orientation", "landscape", "portrait", "rotate"},
}

// cjkGlossary gives English words for common Chinese words of tasks and tool
// descriptions, so that a Chinese task finds an English tool and the other way round.
// Space-separated words are alternatives; words joined by "+" are a phrase, whose words a
// query needs all of (股价 is stock and price).
var cjkGlossary = map[string]string{
	"文件": "file", "目录": "directory", "文件夹": "folder", "读取": "read", "读": "read", "写入": "write", "写": "write",
	"保存": "save", "删除": "delete", "创建": "create", "新建": "create", "编辑": "edit", "修改": "edit", "更新": "update",
	"移动": "move", "重命名": "rename", "复制": "copy", "列出": "list", "列表": "list", "搜索": "search", "查找": "find",
	"查询": "query", "检索": "search", "获取": "get", "查看": "view", "显示": "show", "打开": "open", "关闭": "close",
	"网页": "web page", "页面": "page", "网站": "website", "网址": "url", "链接": "link", "浏览器": "browser", "标签页": "tab",
	"截图": "screenshot", "截屏": "screenshot", "快照": "snapshot", "图片": "image", "图像": "image", "照片": "photo",
	"点击": "click", "单击": "click", "输入": "type", "填写": "fill", "表单": "form", "按键": "press+key", "悬停": "hover",
	"拖": "drag", "上传": "upload", "下载": "download", "等待": "wait", "导航": "navigate", "跳转": "navigate", "后退": "back",
	"脚本": "script", "执行": "execute", "运行": "run", "命令": "command", "终端": "terminal", "进程": "process",
	"终止": "terminate", "结束": "kill", "日志": "logs", "控制台": "console", "网络": "network", "请求": "request",
	"仓库": "repository", "代码": "code", "问题": "issue", "议题": "issue", "合并": "merge", "拉取请求": "pull+request",
	"分支": "branch", "提交": "commit", "评论": "comment", "审查": "review", "评审": "review",
	"消息": "message", "频道": "channel", "发送": "send", "回复": "reply", "用户": "user", "成员": "member",
	"图表": "chart", "饼图": "pie chart", "柱状图": "column chart", "条形图": "bar chart", "折线图": "line chart",
	"散点图": "scatter chart", "雷达图": "radar chart", "漏斗图": "funnel chart", "词云": "word cloud", "思维导图": "mind map",
	"流程图": "flow diagram", "组织架构图": "organization chart", "直方图": "histogram", "面积图": "area chart",
	"桑基图": "sankey", "树图": "treemap", "鱼骨图": "fishbone", "箱线图": "boxplot", "小提琴图": "violin",
	"瀑布图": "waterfall", "水波图": "liquid", "韦恩图": "venn", "双轴图": "dual axes", "表格": "spreadsheet table",
	"天气": "weather", "地址": "address", "坐标": "coordinates", "经纬度": "coordinates latitude longitude",
	"路线": "route", "路径": "route", "驾车": "driving", "开车": "driving", "步行": "walking", "走路": "walking",
	"骑行": "bicycling", "公交": "transit", "地铁": "transit", "距离": "distance", "附近": "nearby", "周边": "around",
	"地点": "place", "位置": "location", "定位": "location", "地图": "map", "路况": "traffic", "拥堵": "traffic",
	"数据库": "database", "表": "table", "记忆": "memory", "知识图谱": "knowledge+graph", "实体": "entity", "关系": "relation",
	"文档": "documentation docs", "库": "library", "思考": "thinking", "性能": "performance", "内存": "memory heap",
	"集群": "cluster kubernetes", "容器": "container pod", "部署": "deployment", "扩容": "scale", "缩容": "scale",
	"配置": "config", "设置": "set settings", "环境变量": "environment+variables", "爬取": "crawl", "抓取": "scrape",
	"论文": "paper", "监控": "monitor", "页面内容": "page+content", "元数据": "metadata", "信息": "info message", "提交信息": "commit+message", "消息内容": "message+content",
	"大小": "size", "树": "tree", "权限": "allowed", "压缩": "gzip compress", "求和": "sum", "相加": "sum add",
	"回显": "echo", "内容": "content", "多个": "multiple", "对话框": "dialog", "弹窗": "dialog", "录屏": "screencast record", "下拉": "dropdown select",
	// verbs of tool use
	"发": "send", "发一封": "send", "起草": "draft", "草稿": "draft", "撰写": "write", "转发": "forward", "取消": "cancel",
	"安排": "schedule", "预约": "schedule book", "预订": "book", "订": "book", "接受": "accept", "拒绝": "decline",
	"分配": "assign", "指派": "assign", "完成": "complete done", "标记": "mark", "归档": "archive", "恢复": "restore",
	"备份": "backup", "同步": "sync", "导出": "export", "导入": "import", "安装": "install", "卸载": "uninstall",
	"启动": "start launch", "停止": "stop", "重启": "restart reboot", "回滚": "rollback", "构建": "build", "测试": "test",
	"调试": "debug", "分析": "analyze", "总结": "summarize", "摘要": "summary", "翻译": "translate", "改写": "rephrase",
	"润色": "rephrase", "转换": "convert", "解压": "extract unzip", "比较": "compare", "对比": "compare", "排序": "sort",
	"过滤": "filter", "筛选": "filter", "统计": "count statistics", "计算": "calculate", "生成": "generate", "画": "draw",
	"绘制": "draw", "渲染": "render", "录制": "record", "截": "screenshot", "滚动": "scroll", "滑动": "swipe", "拖动": "drag",
	"选择": "select", "登录": "login", "登出": "logout", "注册": "register", "订阅": "subscribe", "静音": "mute",
	"通知": "notification", "提醒": "reminder", "追踪": "track trace", "跟踪": "track", "告警": "alert", "报警": "alert",
	"推送": "push", "广播": "broadcast", "邀请": "invite", "搜": "search", "找": "find", "查": "query", "看看": "view",
	"看一下": "view", "打印": "print", "暂存": "stash", "推": "push", "拉": "pull", "克隆": "clone", "撤销": "undo revert",
	"检查": "check", "验证": "validate verify", "校验": "validate", "买": "buy", "卖": "sell", "买入": "buy", "卖出": "sell",
	"记": "log record", "规划": "plan", "计划": "plan", "推荐": "recommend", "解释": "explain", "问": "ask",
	// things tools work on
	"邮件": "email mail", "邮箱": "email inbox", "收件箱": "inbox", "附件": "attachment", "标签": "label tag", "日历": "calendar",
	"日程": "calendar event schedule", "会议": "meeting", "待办": "todo task", "任务": "task", "项目": "project", "看板": "board",
	"迭代": "iteration sprint", "冲刺": "sprint", "工单": "ticket issue", "缺陷": "bug", "里程碑": "milestone", "路线图": "roadmap",
	"版本": "version release", "发布": "release publish", "合并请求": "merge+request", "流水线": "pipeline", "制品": "artifact",
	"集合": "collection", "记录": "record", "行": "row", "列": "column", "字段": "field", "索引": "index", "向量": "vector",
	"数据": "data", "服务器": "server droplet", "主机": "host", "云": "cloud", "域名": "domain", "证书": "certificate",
	"防火墙": "firewall", "负载均衡": "load+balancer", "镜像": "image", "节点": "node", "端口": "port", "密钥": "key secret",
	"账号": "account", "账户": "account", "余额": "balance", "账单": "billing invoice", "发票": "invoice", "价格": "price",
	"股价": "stock+price", "股票": "stock", "行情": "quote market", "汇率": "exchange+rate", "比特币": "bitcoin btc",
	"加密货币": "crypto", "以太坊": "ethereum eth", "交易所": "exchange", "订单": "order", "航班": "flight", "机场": "airport",
	"机票": "flight+ticket", "酒店": "hotel", "民宿": "airbnb accommodation", "住宿": "accommodation", "行程": "itinerary trip",
	"旅行": "travel trip", "旅游": "travel trip", "景点": "attraction sight", "餐厅": "restaurant", "咖啡": "coffee", "咖啡店": "cafe coffee",
	"美食": "food restaurant", "好吃": "food restaurant", "菜谱": "recipe", "食谱": "recipe", "怎么做": "recipe how cook", "吃什么": "eat meal",
	"空气质量": "air+quality", "空气": "air", "污染": "pollution", "温度": "temperature", "下雨": "rain", "预报": "forecast",
	"时区": "timezone", "时间": "time", "几点": "time", "日期": "date", "今天": "today", "明天": "tomorrow", "周末": "weekend",
	"文献": "paper literature", "引用": "citation", "新闻": "news", "视频": "video", "字幕": "transcript subtitle caption",
	"帖子": "post", "群": "group chat", "群聊": "group chat", "聊天记录": "chat history messages", "联系人": "contact",
	"电话": "phone", "客户": "customer", "商机": "deal", "笔记": "note notes", "笔记本": "notebook", "电子表格": "spreadsheet excel",
	"工作表": "sheet worksheet", "单元格": "cell", "幻灯片": "slides presentation", "架构图": "architecture+diagram",
	"设计稿": "design", "图标": "icon", "手机": "phone mobile device", "模拟器": "simulator emulator", "应用": "app",
	"屏幕": "screen", "训练": "workout training", "健身": "workout fitness", "体重": "weight body measurement",
	"深蹲": "squat exercise", "网上": "web online", "互联网": "internet web", "状态": "status", "值班": "oncall",
	"事故": "incident", "故障": "incident outage", "报错": "error", "错误": "error", "异常": "exception error", "崩溃": "crash",
	"指标": "metric", "链路": "trace", "磁盘": "disk", "空间": "space", "仪表盘": "dashboard", "面板": "panel dashboard",
	"经纬": "latitude longitude coordinates", "海拔": "elevation", "洪水": "flood", "时长": "duration", "文章": "article",
	"评价": "review", "英文": "english", "中文": "chinese", "日文": "japanese", "日语": "japanese", "德语": "german", "法语": "french",
	// brands and the names services go by
	"谷歌": "google", "百度": "baidu", "必应": "bing", "微软": "microsoft", "飞书": "feishu lark", "钉钉": "dingtalk",
	"微信": "wechat", "高德": "amap gaode", "苹果": "apple", "特斯拉": "tesla", "英伟达": "nvidia", "亚马逊": "amazon",
	"阿里": "alibaba aliyun", "阿里云": "aliyun", "腾讯": "tencent", "抖音": "douyin tiktok", "知乎": "zhihu", "微博": "weibo",
	"淘宝": "taobao", "京东": "jd", "支付宝": "alipay", "推特": "twitter", "油管": "youtube", "维基": "wiki wikipedia",
}

// glossaryTerms emits the English terms of every glossary word that occurs in run, once
// each.
func glossaryTerms(run string, emit func(string)) {
	var seenBuf [16]int32
	seen := seenBuf[:0]
	for i, r := range run {
		for _, e := range glossaryByRune[r] {
			g := &glossaryEntries[e]
			if !strings.HasPrefix(run[i:], g.word) || slices.Contains(seen, e) {
				continue
			}
			seen = append(seen, e)
			for _, t := range g.terms {
				emit(t)
			}
		}
	}
}

// glossaryEntry is one glossary word with its English words, stemmed: its alternatives
// (the first word of each) and the further words of those that are phrases ("stock+price":
// stock, then price), each a word of the query of its own.
type glossaryEntry struct {
	word   string
	terms  []string // every word, for the index
	alts   []string
	phrase []string
}

// glossaryEntries are the glossary's words; glossaryByRune indexes them by first character.
var glossaryEntries, glossaryByRune = func() ([]glossaryEntry, map[rune][]int32) {
	var entries []glossaryEntry
	byRune := map[rune][]int32{}
	for zh, en := range cjkGlossary {
		g := glossaryEntry{word: zh}
		for _, alt := range strings.Fields(en) {
			for i, w := range strings.Split(alt, "+") {
				w = stem(w)
				g.terms = append(g.terms, w)
				if i == 0 {
					g.alts = append(g.alts, w)
				} else {
					g.phrase = append(g.phrase, w)
				}
			}
		}
		r, _ := utf8.DecodeRuneInString(zh)
		byRune[r] = append(byRune[r], int32(len(entries)))
		entries = append(entries, g)
	}
	return entries, byRune
}()

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// synonyms maps a stemmed word to the stemmed words it may stand for, itself excluded.
var synonyms = func() map[string][]string {
	m := map[string]map[string]bool{}
	for _, g := range synonymGroups {
		for _, a := range g {
			sa := stem(a)
			for _, b := range g {
				sb := stem(b)
				if sa == sb {
					continue
				}
				if m[sa] == nil {
					m[sa] = map[string]bool{}
				}
				m[sa][sb] = true
			}
		}
	}
	out := make(map[string][]string, len(m))
	for k, set := range m {
		for w := range set {
			out[k] = append(out[k], w)
		}
	}
	return out
}()

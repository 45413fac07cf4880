/*
 * report.js - draws `fidx report`'s page from its data (the JSON in
 * #fidx-data, written by report.c).
 *
 * Every name and error text is data: it is put into the page with
 * textContent (show(), text()) and never parsed as markup.  A byte that is
 * not UTF-8 comes as the lone surrogate U+DC00+byte and is shown as \xNN,
 * a control character as \n, \t or \xNN, both marked (class "esc") so that
 * no two names look alike and none can move the page.
 *
 * The treemap shows the node zoomed into (the top at first): its children,
 * and theirs inside the larger ones, laid out squarified (Bruls, Huizing
 * and van Wijk, 2000) by the measure chosen (allocated, apparent or
 * entries).  A click on a directory zooms into it; the path above it goes
 * back up.  A box of type "+" stands for the smaller entries of a
 * directory that the report did not list one by one.
 */
(function () {
	'use strict';
	const D = JSON.parse(document.getElementById('fidx-data').textContent);

	/* The elements made here: el('td', {className: 'n'}, child...). */
	function el(tag, props, ...kids) {
		const e = document.createElement(tag);
		for (const k in props || {})
			if (k === 'data')
				for (const d in props.data)
					e.dataset[d] = props.data[d];
			else
				e[k] = props[k];
		for (const k of kids)
			if (k !== null && k !== undefined)
				e.append(typeof k === 'string' ? document.createTextNode(k) : k);
		return e;
	}

	const hex2 = (n) => n.toString(16).padStart(2, '0');

	/*
	 * Whether c draws nothing or moves what follows (zero-width characters, bidi
	 * controls, the soft hyphen, line and paragraph separators): shown as \\uXXXX,
	 * so that "a\\u200bb" never passes for "ab" nor an override reverses a name.
	 */
	function invisible(c) {
		return c === 0xad || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
			(c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x206f) || c === 0xfeff;
	}

	/* The visible form of a code point that must not be shown as it is, or null. */
	function escOf(c) {
		if (c >= 0xdc80 && c <= 0xdcff)
			return '\\x' + hex2(c - 0xdc00);  /* a byte that is not UTF-8 */
		if (c === 10) return '\\n';
		if (c === 9) return '\\t';
		if (c === 13) return '\\r';
		if (c < 0x20 || c === 0x7f)
			return '\\x' + hex2(c);
		if (c >= 0x80 && c < 0xa0)
			return '\\u00' + hex2(c);
		if ((c >= 0xd800 && c <= 0xdfff) || invisible(c))
			return '\\u' + c.toString(16).padStart(4, '0');
		return null;
	}

	/* A name as nodes: its text, with what escOf() shows marked. */
	function show(s) {
		const f = document.createDocumentFragment();
		let run = '';
		for (const ch of s) {
			const esc = escOf(ch.codePointAt(0));
			if (esc === null) {
				run += ch;
				continue;
			}
			if (run)
				f.append(document.createTextNode(run));
			run = '';
			f.append(el('span', {className: 'esc'}, esc));
		}
		if (run)
			f.append(document.createTextNode(run));
		return f;
	}

	/* A name as plain text (a tooltip), escaped as show() marks it. */
	function text(s) {
		let out = '';
		for (const ch of s) {
			const esc = escOf(ch.codePointAt(0));
			out += esc === null ? ch : esc;
		}
		return out;
	}

	/* Sizes as fidx prints them: "512 B", "1.5 KiB". */
	function size(n) {
		const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
		let u = 0, v = Number(n);
		while (v >= 1024 && u < units.length - 1) {
			v /= 1024;
			u++;
		}
		return u === 0 ? v + ' B' : (v < 10 ? v.toFixed(1) : v.toFixed(0)) + ' ' + units[u];
	}

	const count = (n) => Number(n).toLocaleString('en-US');
	function when(sec) {
		if (sec === null || sec === undefined)
			return '';
		const d = new Date(sec * 1000);
		return isNaN(d) ? String(sec) : d.toISOString().replace('.000Z', 'Z');
	}
	const typeNames = {f: 'file', d: 'directory', l: 'symlink', p: 'fifo', s: 'socket',
			   c: 'char device', b: 'block device', '+': 'smaller entries'};

	/* The tree: nodes as [parent, name, type, apparent, allocated, entries, errors, latest, flags, more]. */
	const N = D.tree.map((a, i) => ({
		i, parent: a[0], name: a[1], type: a[2], apparent: a[3], allocated: a[4],
		entries: a[5], errors: a[6], latest: a[7], flags: a[8], more: a[9], kids: [],
	}));
	for (const n of N)
		if (n.parent >= 0)
			N[n.parent].kids.push(n);
	const top = N[0];

	/* The path of node n, from the top's (the base's) own. */
	function pathOf(n) {
		const parts = [];
		for (let v = n; v; v = v.parent >= 0 ? N[v.parent] : null)
			parts.unshift(v.type === '+' ? '' : v.name);
		let p = parts.shift();
		for (const s of parts)
			p += (p.endsWith('/') ? '' : '/') + s;
		return p;
	}

	/* --- the page's frame --- */
	const S = D.scan;
	const header = el('header', null,
		el('h1', null, 'fidx report: scan ' + S.id + ' of ', show(S.base)),
		el('div', {className: 'meta'},
		   'root ', show(S.root), ' on host ', show(S.host || '?'), ' \u00b7 status ',
		   S.status, ' \u00b7 started ', when(S.started), ' \u00b7 digests ', S.hash || 'none',
		   ' \u00b7 database ', show(S.database), ' \u00b7 written ', when(S.generated),
		   ' by fidx ', S.version));
	const sections = [['space', 'Space'], ['largest', 'Largest files'],
			  ['dupes', 'Duplicates'], ['types', 'Types and extensions'],
			  ['timeline', 'Modification times'], ['errors', 'Errors'],
			  ['changes', 'Changes']];
	const nav = el('nav', null, ...sections.map(([id, t]) => el('a', {href: '#' + id}, t)));
	const main = el('main');
	document.body.append(header, nav, main);
	document.title = 'fidx report: ' + text(S.base);

	function section(id, title, ...kids) {
		const s = el('section', {id}, el('h2', null, title), ...kids);
		main.append(s);
		return s;
	}

	function card(key, value, testid, exact) {
		const v = el('div', {className: 'v'}, value);
		v.dataset.testid = testid;
		if (exact !== undefined)
			v.dataset.value = String(exact);
		return el('div', {className: 'card'}, el('div', {className: 'k'}, key), v);
	}

	/* --- space: totals and the treemap --- */
	const T = D.totals;
	const cards = el('div', {className: 'cards'},
		card('apparent size', size(T.apparent), 'total-apparent', T.apparent),
		card('allocated', size(T.allocated), 'total-allocated', T.allocated),
		card('entries', count(T.entries), 'total-entries', T.entries),
		card('with an error', count(T.errors), 'total-errors', T.errors),
		card('reclaimable (duplicates)', D.dupes ? size(D.dupes.waste) : 'not computed',
		     'total-waste', D.dupes ? D.dupes.waste : ''));

	let measure = top.allocated > 0 ? 'allocated' : top.apparent > 0 ? 'apparent' : 'entries';
	let zoomed = top;
	const crumbs = el('div', {className: 'crumbs'});
	crumbs.dataset.testid = 'crumbs';
	const select = el('select', {}, ...['allocated', 'apparent', 'entries'].map(
		(m) => el('option', {value: m, selected: m === measure}, m === 'entries' ? 'entries'
								       : m + ' size')));
	select.dataset.testid = 'measure';
	select.addEventListener('change', () => { measure = select.value; draw(); });
	const map = el('div', {id: 'treemap'});
	const mapNote = el('div', {className: 'note'});
	section('space', 'Space by directory', cards,
		el('div', {className: 'controls'}, el('label', null, 'Measure ', select), crumbs),
		map, mapNote);

	/* Squarified layout of items ({v}) in the rectangle: sets each item's x, y, w, h. */
	function squarify(items, x, y, w, h) {
		let rest = items, total = items.reduce((s, it) => s + it.v, 0);
		while (rest.length && w > 0 && h > 0 && total > 0) {
			const scale = (w * h) / total, side = Math.min(w, h);
			let row = 0, sum = 0, best = Infinity, rmax = 0, rmin = Infinity;
			while (row < rest.length) {
				const a = rest[row].v * scale;
				const s = sum + a, mx = Math.max(rmax, a), mn = Math.min(rmin, a);
				const worst = Math.max((side * side * mx) / (s * s), (s * s) / (side * side * mn));
				if (worst > best)
					break;
				best = worst;
				sum = s;
				rmax = mx;
				rmin = mn;
				row++;
			}
			const thick = sum / side;
			let at = 0;
			for (let i = 0; i < row; i++) {
				const len = (rest[i].v * scale) / thick;
				Object.assign(rest[i], w >= h ? {x, y: y + at, w: thick, h: len}
							 : {x: x + at, y, w: len, h: thick});
				at += len;
			}
			for (let i = 0; i < row; i++)
				total -= rest[i].v;
			if (w >= h) {
				x += thick;
				w -= thick;
			} else {
				y += thick;
				h -= thick;
			}
			rest = rest.slice(row);
		}
	}

	function colour(n, depth) {
		if (n.type === 'd')
			return 'hsl(' + ((depth * 47 + 210) % 360) + ',45%,' + (78 - 6 * (depth % 3)) + '%)';
		const dot = n.name.lastIndexOf('.');
		const ext = dot > 0 ? n.name.slice(dot + 1).toLowerCase() : '';
		let h = 0;
		for (const ch of ext)
			h = (h * 31 + ch.codePointAt(0)) % 360;
		return ext ? 'hsl(' + h + ',55%,72%)' : 'hsl(0,0%,80%)';
	}

	let boxes = 0;
	const MAX_BOXES = 4000;

	/* Draws n's children in the rectangle of parent (an element), nesting while they are large. */
	function layout(n, parent, w, h, depth) {
		const items = n.kids.map((k) => ({k, v: Number(k[measure])})).filter((it) => it.v > 0);
		items.sort((a, b) => b.v - a.v);
		squarify(items, 0, 0, w, h);
		for (const it of items) {
			/* (An item the layout could not place: sizes past 2^53 apart lose it to rounding.) */
			if (boxes >= MAX_BOXES || !(it.w * it.h >= 4))
				continue;
			const k = it.k, dir = k.type === 'd' || k.kids.length > 0;
			const b = el('div', {className: 'box' + (dir ? ' dir' : '') + (k.type === '+' ? ' rest' : '')});
			b.style.left = it.x + 'px';
			b.style.top = it.y + 'px';
			b.style.width = it.w + 'px';
			b.style.height = it.h + 'px';
			b.style.background = colour(k, depth);
			const label = k.type === '+' ? count(k.more) + ' smaller entries' : text(k.name) + (dir ? '/' : '');
			b.title = (k.type === '+' ? text(pathOf(N[k.parent])) + ': ' + label : text(pathOf(k))) + '\n' +
				size(k.apparent) + ' apparent, ' + size(k.allocated) + ' allocated, ' +
				count(k.entries) + ' entries';
			b.dataset.node = String(k.i);
			boxes++;
			if (it.w > 40 && it.h > 14) {
				const lbl = el('div', {className: 'lbl'});
				lbl.append(k.type === '+' ? label : show(k.name), dir ? '/' : '', ' ',
					   size(measure === 'entries' ? 0 : k[measure]).replace(/^0 B$/, count(k.entries)));
				b.append(lbl);
			}
			parent.append(b);
			if (k.kids.length && it.w > 60 && it.h > 40 && depth < 2) {
				const inner = el('div');
				inner.style.cssText = 'position:absolute;left:2px;top:15px;right:2px;bottom:2px';
				b.append(inner);
				layout(k, inner, it.w - 6, it.h - 19, depth + 1);
			}
		}
	}

	function draw() {
		map.replaceChildren();
		boxes = 0;
		layout(zoomed, map, map.clientWidth, map.clientHeight, 0);
		crumbs.replaceChildren();
		const chain = [];
		for (let v = zoomed; v; v = v.parent >= 0 ? N[v.parent] : null)
			chain.unshift(v);
		chain.forEach((v, i) => {
			const b = el('button', {type: 'button'}, show(v.name));
			b.addEventListener('click', () => { zoomed = v; draw(); });
			if (i && !chain[i - 1].name.endsWith('/'))
				crumbs.append('/');
			crumbs.append(b);
		});
		crumbs.dataset.path = pathOf(zoomed);
		mapNote.replaceChildren(show(pathOf(zoomed)), ': ', size(zoomed.apparent), ' apparent, ',
			size(zoomed.allocated), ' allocated, ', count(zoomed.entries), ' entries',
			zoomed.errors ? ', ' + count(zoomed.errors) + ' with an error' : '',
			'. Click a directory to zoom in; the path above goes back. ' +
			'Boxes of hatched grey hold the smaller entries of a directory.');
		mapNote.dataset.testid = 'zoom-note';
	}

	map.addEventListener('click', (ev) => {
		const b = ev.target.closest('.box');
		if (!b)
			return;
		let n = N[Number(b.dataset.node)];
		/* A click inside a nested box zooms one level: into the child of the zoomed node. */
		while (n.parent >= 0 && N[n.parent] !== zoomed)
			n = N[n.parent];
		if (n.kids.length) {
			zoomed = n;
			draw();
		}
	});
	window.addEventListener('resize', () => draw());

	/* --- tables --- */
	function table(head, rows, testid) {
		const t = el('table', null, el('thead', null, el('tr', null, ...head.map(
			([h, cls]) => el('th', {className: cls || ''}, h)))), el('tbody', null, ...rows));
		t.dataset.testid = testid;
		return t;
	}
	const td = (x, cls) => el('td', {className: cls || ''}, x);

	section('largest', 'Largest files',
		D.largest.length ? table([['size', 'n'], ['allocated', 'n'], ['modified'], ['path']],
			D.largest.map((e) => el('tr', null, td(size(e[2]), 'n'), td(size(e[3]), 'n'),
						 td(when(e[4])), td(show(e[0]), 'p'))), 'largest')
			: el('p', {className: 'note'}, 'No regular file with a size.'));

	/* A duplicate group as a row: [size, waste, [[paths of a file]...]]. */
	function groupRow(g) {
		const files = g[2].map((names) => el('div', {className: 'group'},
			...names.map((p) => el('div', null, show(p)))));
		return el('tr', null, td(size(g[1]), 'n'), td(size(g[0]), 'n'), td(String(g[2].length), 'n'),
			  td(el('div', null, ...files), 'p'));
	}

	if (!D.dupes) {
		section('dupes', 'Duplicates', el('p', {className: 'note'},
			'Not computed (fidx report --no-dupes).'));
	} else {
		const d = D.dupes, summary = el('p', null, count(d.groups) + (d.groups === 1 ? ' group' : ' groups') +
			' of identical files, ' + count(d.files) + ' files, ' + size(d.waste) + ' reclaimable' +
			(d.left_out ? '; ' + count(d.left_out) + ' files left out (changed or unreadable)' : '') + '.');
		summary.dataset.testid = 'dupes-summary';
		summary.dataset.groups = d.groups;
		summary.dataset.waste = d.waste;
		section('dupes', 'Duplicates by reclaimable bytes', summary,
			d.list.length ? table([['reclaimable', 'n'], ['size', 'n'], ['copies', 'n'], ['paths']],
				d.list.map(groupRow), 'dupes') : null,
			d.list.length < d.groups ? el('p', {className: 'note'}, 'The first ' + d.list.length +
				' groups are listed (fidx report --top N).') : null,
			d.left.length ? table([['left out'], ['why']], d.left.map((l) =>
				el('tr', null, td(show(l[0]), 'p'), td(show(l[1])))), 'dupes-left') : null);
	}

	const typesTable = table([['type'], ['entries', 'n'], ['apparent', 'n'], ['allocated', 'n']],
		D.types.map((t) => el('tr', null, td(t[1]), td(count(t[2]), 'n'), td(size(t[3]), 'n'),
			td(size(t[4]), 'n'))), 'types');
	const maxExt = D.exts.reduce((m, e) => Math.max(m, e[2]), 1);
	const extTable = table([['extension'], ['files', 'n'], ['bytes', 'n'], ['']],
		D.exts.map((e) => {
			const bar = el('div', {className: 'bar'});
			bar.style.width = Math.max(1, (200 * e[2]) / maxExt) + 'px';
			const name = e[0] === null ? el('i', null, e[3] + ' more extensions')
				: e[0] === '' ? el('i', null, '(none)') : show('.' + e[0]);
			return el('tr', null, td(name, 'p'), td(count(e[1]), 'n'), td(size(e[2]), 'n'), td(bar));
		}), 'exts');
	section('types', 'Types and extensions', typesTable,
		el('p', {className: 'note'}, 'Every name counts, as in fidx stats (a file with two hard links twice; fidx du and the treemap count it once). Regular files by extension:'),
		extTable);

	/* Timeline: bars per month, or per year over a longer span. */
	(function () {
		const months = D.timeline.months, s = section('timeline', 'Modification times of regular files');
		if (!months.length) {
			s.append(el('p', {className: 'note'}, 'No regular file with a modification time.'));
			return;
		}
		const first = months[0][0], last = months[months.length - 1][0];
		const byYear = last - first > 72;
		const bins = new Map();
		for (const [m, c, b] of months) {
			const key = byYear ? Math.floor(m / 12) : m;
			const v = bins.get(key) || [0, 0];
			bins.set(key, [v[0] + c, v[1] + b]);
		}
		const keys = [...bins.keys()].sort((a, b) => a - b);
		const dense = keys[keys.length - 1] - keys[0] < 600;
		const all = dense ? Array.from({length: keys[keys.length - 1] - keys[0] + 1}, (_, i) => keys[0] + i) : keys;
		const label = (k) => byYear ? String(k) : Math.floor(k / 12) + '-' + String(k % 12 + 1).padStart(2, '0');
		const max = Math.max(...all.map((k) => (bins.get(k) || [0])[0]));
		const chart = el('div', {className: 'timeline'});
		chart.dataset.testid = 'timeline';
		for (const k of all) {
			const v = bins.get(k) || [0, 0];
			const bar = el('div', {title: label(k) + ': ' + count(v[0]) + ' files, ' + size(v[1])});
			bar.style.height = (v[0] ? Math.max(1, (100 * v[0]) / max) : 0) + '%';
			chart.append(bar);
		}
		s.append(el('p', {className: 'note'}, 'Files per ' + (byYear ? 'year' : 'month') +
			' (UTC); hover a bar for its figures.'), chart,
			el('div', {className: 'axis'}, el('span', null, label(all[0])), el('span', null, label(all[all.length - 1]))),
			D.timeline.undated[0] ? el('p', {className: 'note'}, count(D.timeline.undated[0]) +
				' files without a modification time a calendar can show.') : null);
	})();

	const E = D.errors;
	section('errors', 'Entries recorded with an error',
		E.total ? table([['path'], ['error']], E.list.map((e) => el('tr', null, td(show(e[0]), 'p'),
			td(show(e[1])))), 'errors') : el('p', {className: 'note'}, 'None: every entry was read whole.'),
		E.list.length < E.total ? el('p', {className: 'note'}, 'The first ' + E.list.length + ' of ' +
			count(E.total) + ' (fidx find --error lists them all).') : null);

	if (!D.diff) {
		section('changes', 'Changes', el('p', {className: 'note'},
			'No earlier complete scan of this root to compare with (fidx report --against ID).'));
	} else {
		const c = D.diff, sum = el('p', null, 'Since scan ' + c.old + ': ' + count(c.added) + ' added, ' +
			count(c.removed) + ' removed, ' + count(c.changed) + ' changed, ' + count(c.moved) + ' moved.');
		sum.dataset.testid = 'diff-summary';
		section('changes', 'Changes since scan ' + c.old, sum,
			c.list.length ? table([['what'], ['summary'], ['path'], ['from']], c.list.map((e) =>
				el('tr', null, td(e[0]), td(el('code', null, e[1])), td(show(e[2]), 'p'),
				   td(e[3] === null ? '' : show(e[3]), 'p'))), 'changes') : null,
			el('p', {className: 'note'}, 'The summary has one letter per attribute, as fidx diff prints it.'));
	}

	draw();
})();

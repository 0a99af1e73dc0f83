# Written by `syncsim plot`; run `gnuplot docs/capacity-70b-4k-mfu.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/capacity-70b-4k-mfu.svg"
set title "capacity-70b-4k.yaml: Llama-3-70B DDP on 4096 H100, MFU vs leaf oversubscription"
set xlabel "fabric.spine_leaf.oversubscription"
set ylabel "mfu"
set grid
set key below
set datafile separator '\t'
$d0 << EOD
1	0.6636701030762908	1
2	0.6627617529113004	2
3	0.6622861453255336	3
4	0.661343715640626	4
EOD
$d1 << EOD
1	0.6639215920647771	1
2	0.6638042372519909	2
3	0.663465964659183	3
4	0.6629928766632306	4
EOD
plot $d0 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=400Gbps", \
     $d1 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=800Gbps"
